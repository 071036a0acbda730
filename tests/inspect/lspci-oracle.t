#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
#
# `umsi inspect --dump FILE --json` agrees with `lspci -F FILE -vvv` on
# every MSI and MSI-X field lspci prints, for every real dump in
# ../shared/data/pci-dumps: MSI Enable, Count=enabled/capable, Maskable,
# 64bit, Address, Data, Masking, Pending; MSI-X Enable, Count, Masked,
# Vector table BAR/offset, PBA BAR/offset; and the capability offsets. It
# also checks that we find no MSI/MSI-X capability lspci does not print,
# and that the text output carries lspci's MSI/MSI-X lines verbatim.
use strict;
use warnings;
use JSON::PP;
use Test::More;
use FindBin;
require "$FindBin::Bin/lib.pl";

our ($UMSI, $DUMPS);
plan skip_all => "$DUMPS is absent (the shared data beside the repository)"
	unless -d $DUMPS;
plan skip_all => "lspci is not installed (Debian: pciutils)"
	unless system('sh', '-c', 'command -v lspci >/dev/null') == 0;
plan skip_all => "$UMSI is not built" unless -x $UMSI;

my $b = sub { $_[0] eq '+' ? JSON::PP::true : JSON::PP::false };

# Parse lspci -vvv: { bdf => { msi => {...}, msix => {...}, lines => [...] } },
# where lines are lspci's MSI and MSI-X lines, verbatim.
sub lspci_caps {
	my ($file) = @_;
	my (%dev, $cur, $cap);
	for (split /\n/, `lspci -F '$file' -vvv 2>/dev/null`) {
		push @{$dev{$cur}{lines}}, $_
			if $cur && (/^\tCapabilities: \[[0-9a-f]+\] MSI(-X)?: / ||
				    ($cap && /^\t\t(Address|Masking|Vector table|PBA):/));
		if (/^(?:([0-9a-f]{4,6}):)?([0-9a-f]{2}:[0-9a-f]{2}\.[0-7]) /) {
			$cur = sprintf('%04x', hex($1 // '0')) . ":$2";
			$dev{$cur} = {};
			$cap = undef;
		} elsif (/^\tCapabilities: \[([0-9a-f]+)\] MSI: Enable(.) Count=(\d+)\/(\d+) Maskable(.) 64bit(.)/) {
			$cap = $dev{$cur}{msi} //= { cap => hex($1), enabled => $2,
				count_enabled => $3, count_cap => $4,
				maskable => $5, addr64 => $6 };
		} elsif (/^\tCapabilities: \[([0-9a-f]+)\] MSI-X: Enable(.) Count=(\d+) Masked(.)/) {
			$cap = $dev{$cur}{msix} //= { cap => hex($1), enabled => $2,
				table_size => $3, function_mask => $4 };
		} elsif (/^\tCapabilities:/) {
			$cap = undef;
		} elsif ($cap && /^\t\tAddress: ([0-9a-f]+)  Data: ([0-9a-f]+)/) {
			@$cap{qw(address data)} = (hex($1), hex($2));
		} elsif ($cap && /^\t\tMasking: ([0-9a-f]+)  Pending: ([0-9a-f]+)/) {
			@$cap{qw(mask pending)} = (hex($1), hex($2));
		} elsif ($cap && /^\t\tVector table: BAR=(\d) offset=([0-9a-f]+)/) {
			@$cap{qw(table_bar table_offset)} = ($1, hex($2));
		} elsif ($cap && /^\t\tPBA: BAR=(\d) offset=([0-9a-f]+)/) {
			@$cap{qw(pba_bar pba_offset)} = ($1, hex($2));
		}
	}
	return \%dev;
}

my %num = map { $_ => 1 } qw(count_enabled count_cap table_size table_bar pba_bar);
my %hexf = map { $_ => 1 } qw(cap address data mask pending table_offset pba_offset);
my ($fields, $files, $caps, $tlines) = (0, 0, 0, 0);

for my $file (dump_files()) {
	my $name = $file =~ s{.*/}{}r;
	my $want = lspci_caps($file);
	my ($rc, $out, $err) = run_cmd($UMSI, 'inspect', '--dump', $file, '--json');
	my $doc = eval { decode_json($out) };
	ok($doc, "$name: --json output parses") or do { diag($@, $err); next };
	is($rc, 0, "$name: exit status 0");
	$files++;
	my %got = map { $_->{bdf} => $_ } @{$doc->{devices}};
	# The text output, split per function.
	my (%text, $tb);
	(undef, my $txt) = run_cmd($UMSI, 'inspect', '--dump', $file);
	for (split /\n/, $txt) {
		$tb = $1 if /^([0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]) /;
		$text{$tb}{$_} = 1 if $tb;
	}
	for my $bdf (sort keys %$want) {
		my $g = $got{$bdf};
		ok($g, "$name $bdf: listed") or next;
		my @lines = @{$want->{$bdf}{lines} // []};
		if (@lines) {
			my @miss = grep { !$text{$bdf}{$_} } @lines;
			ok(!@miss, "$name $bdf: text output has lspci's " . scalar(@lines) .
			   " MSI/MSI-X lines verbatim") or diag(join("\n", @miss));
			$tlines += @lines;
		}
		for my $kind (qw(msi msix)) {
			my $w = $want->{$bdf}{$kind};
			my $j = $g->{$kind};
			if (!$w) {
				ok(!defined $j, "$name $bdf: no $kind, as lspci");
				next;
			}
			$caps++;
			my @bad;
			for my $k (sort keys %$w) {
				my $wv = $w->{$k};
				my $jv = $j->{$k};
				$fields++;
				if (!defined $jv) {
					push @bad, "$k: lspci $wv, ours null";
				} elsif ($num{$k}) {
					push @bad, "$k: lspci $wv, ours $jv" if $jv != $wv;
				} elsif ($hexf{$k}) {
					push @bad, "$k: lspci $wv, ours $jv"
						if $jv !~ /^0x[0-9a-f]+$/ || hex($jv) != $wv;
				} else {
					push @bad, "$k: lspci $wv, ours " . ($jv ? '+' : '-')
						if $jv != $b->($wv);
				}
			}
			ok(!@bad, "$name $bdf $kind [" . sprintf('%02x', $w->{cap}) .
			   "]: " . scalar(keys %$w) . " fields agree") or diag(join("\n", @bad));
			# Dumps never hold the table.
			if ($kind eq 'msix') {
				ok(!defined $j->{entries} && $j->{entries_reason},
				   "$name $bdf: entries null with a reason");
			}
		}
	}
	for my $bdf (sort keys %got) {
		ok($want->{$bdf}, "$name $bdf: lspci lists it too");
	}
}
ok($files > 0, "found dump files in $DUMPS");
diag("$fields MSI/MSI-X fields of $caps capabilities compared across $files files; $tlines lspci lines found verbatim in the text output");
done_testing();
