#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
#
# Differential test against lspci on damaged dumps: the real dumps with
# bytes overwritten (capability pointers, IDs, MSI/MSI-X registers, random
# values) and rows dropped, from a fixed seed. For every function where we
# report no problem, every MSI/MSI-X field lspci prints must equal ours, and
# we must not find a capability lspci does not print (or miss one it does).
# Where the two disagree we must have said why. Every run must exit 0 or 1
# with a JSON document.
use strict;
use warnings;
use JSON::PP;
use Test::More;
use File::Temp qw(tempdir);
use FindBin;
require "$FindBin::Bin/lib.pl";

our ($UMSI, $DUMPS);
plan skip_all => "$DUMPS is absent (PCI_DUMPS names a folder that does not exist)"
	unless -d $DUMPS;
plan skip_all => "lspci is not installed (Debian: pciutils)"
	unless system('sh', '-c', 'command -v lspci >/dev/null') == 0;
plan skip_all => "$UMSI is not built" unless -x $UMSI;

my $iters = $ENV{DIFF_ITERS} // 150;
srand($ENV{DIFF_SEED} // 7);
my $dir = tempdir(CLEANUP => 1);
my @files = dump_files();
my ($compared, $excused, $inputs, @bad) = (0, 0, 0);

for my $iter (1 .. $iters) {
	my $file = $files[int rand @files];
	open(my $h, '<', $file) or die;
	my @l = <$h>;
	close($h);
	my @rows = grep { $l[$_] =~ /^[0-9a-f]{2,3}: / } 0 .. $#l;
	next unless @rows;
	for (1 .. 1 + int rand 40) {
		my $r = $rows[int rand @rows];
		my @b = split / /, $l[$r];
		my $i = 1 + int rand 16;
		next unless defined $b[$i];
		my $nl = $b[$i] =~ /\n/;
		my @v = (sprintf('%02x', int rand 256), qw(05 11 ff 00 40 34),
			 sprintf('%02x', (int rand 64) * 4));
		$b[$i] = $v[int rand @v] . ($nl ? "\n" : '');
		$l[$r] = join ' ', @b;
	}
	splice(@l, $rows[int rand @rows], 1) if rand() < 0.2;
	my $in = "$dir/in.$iter";
	write_file($in, join('', @l));
	$inputs++;

	my $want = lspci_caps('-F', $in);
	my ($rc, $out) = run_cmd($UMSI, 'inspect', '--dump', $in, '--json');
	my $doc = eval { decode_json($out) };
	if (!$doc || ($rc != 0 && $rc != 1)) {
		push @bad, "input $iter (from $file): exit $rc, " . ($doc ? 'JSON' : 'no JSON');
		next;
	}
	my %got = map { $_->{bdf} => $_ } @{$doc->{devices}};
	my %err;
	$err{$_->{bdf} // ''}++ for @{$doc->{errors}};
	for my $bdf (sort keys %$want) {
		if ($err{$bdf}) {
			$excused++;
			next;
		}
		for my $k (qw(msi msix)) {
			my $w = $want->{$bdf}{$k};
			my $j = $got{$bdf} ? $got{$bdf}{$k} : undef;
			$compared++;
			if (!$w != !$j) {
				push @bad, "input $iter (from $file) $bdf: $k " .
					   ($w ? 'printed by lspci, not by us' : 'found by us, not by lspci');
			} elsif ($w) {
				my @d = compare_cap($w, $j);
				push @bad, "input $iter (from $file) $bdf $k: @d" if @d;
			}
		}
	}
}
ok(!@bad, "$inputs damaged dumps: $compared capability comparisons agree with lspci " .
	  "($excused functions skipped because we reported a problem)")
	or diag(join("\n", @bad[0 .. ($#bad < 20 ? $#bad : 19)]));
ok($compared > $inputs, 'the comparison is not vacuous');
done_testing();
