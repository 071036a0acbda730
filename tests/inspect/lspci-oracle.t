#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
#
# `umsi inspect --dump FILE --json` agrees with `lspci -F FILE -vvv` on
# every MSI and MSI-X field lspci prints, for every real dump in
# tests/data/pci-dumps and every simulated one in tests/data/sim-dumps:
# MSI Enable, Count=enabled/capable, Maskable, 64bit, Address, Data,
# Masking, Pending; MSI-X Enable, Count, Masked,
# Vector table BAR/offset, PBA BAR/offset; and the capability offsets. It
# also checks that we find no MSI/MSI-X capability lspci does not print,
# and that the text output carries lspci's MSI/MSI-X lines verbatim.
use strict;
use warnings;
use JSON::PP;
use Test::More;
use FindBin;
require "$FindBin::Bin/lib.pl";

our ($UMSI, $DUMPS, $ROOT);
plan skip_all => "$DUMPS is absent (PCI_DUMPS names a folder that does not exist)"
	unless -d $DUMPS;
plan skip_all => "lspci is not installed (Debian: pciutils)"
	unless system('sh', '-c', 'command -v lspci >/dev/null') == 0;
plan skip_all => "$UMSI is not built" unless -x $UMSI;

my ($fields, $files, $caps, $tlines) = (0, 0, 0, 0);

# The real dumps, then the simulated machines of tests/data/sim-dumps
# (shapes no real dump has: tests/data/README.md).
my @sim;
if (opendir(my $sd, "$ROOT/tests/data/sim-dumps")) {
	@sim = map { "$ROOT/tests/data/sim-dumps/$_" } sort grep { !/^\./ } readdir($sd);
}
for my $file (dump_files(), @sim) {
	my $name = $file =~ s{.*/}{}r;
	my $want = lspci_caps('-F', $file);
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
			my @bad = compare_cap($w, $j);
			$fields += keys %$w;
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
