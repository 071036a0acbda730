#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
#
# The test data in tests/data is what tests/data/README.md says it is:
# every real dump is listed there, unchanged since it was copied from
# pciutils (pci-dumps.sha256), and holds the functions, MSI and MSI-X
# capabilities the README's table gives, as `lspci -F` counts them; every
# generated dump is listed too. Runs on any clone: nothing outside the
# repository is read.
use strict;
use warnings;
use Digest::SHA;
use Test::More;
use FindBin;
require "$FindBin::Bin/lib.pl";

our $ROOT;
my $data = "$ROOT/tests/data";
my $have_lspci = system('sh', '-c', 'command -v lspci >/dev/null') == 0;

open(my $fh, '<', "$data/README.md") or BAIL_OUT("$data/README.md: $!");
my $readme = do { local $/; <$fh> };
close($fh);

# README table rows: | `file` | functions | MSI | MSI-X | ... |
my %row;
while ($readme =~ /^\| `([^`]+)` \| (\d+) \| (\d+) \| (\d+) \|/mg) {
	$row{$1} = [$2, $3, $4];
}

sub files_in {
	my ($dir) = @_;
	opendir(my $d, $dir) or return ();
	my @f = sort grep { !/^\./ && -f "$dir/$_" } readdir($d);
	closedir($d);
	return @f;
}

# Checksums of the real dumps as copied from pciutils.
my %sum;
open($fh, '<', "$data/pci-dumps.sha256") or BAIL_OUT("pci-dumps.sha256: $!");
while (<$fh>) {
	$sum{$2} = $1 if /^([0-9a-f]{64})  (\S+)$/;
}
close($fh);

my @real = files_in("$data/pci-dumps");
is(scalar @real, 41, 'tests/data/pci-dumps holds the 41 dumps of pciutils');
is_deeply([sort keys %sum], \@real, 'pci-dumps.sha256 lists exactly the files present');
for my $f (@real) {
	my $got = Digest::SHA->new(256)->addfile("$data/pci-dumps/$f")->hexdigest;
	is($got, $sum{$f} // '', "$f: unchanged since copied from pciutils");
}

my @gen = files_in("$data/sim-dumps");
for my $f (@real, @gen) {
	my $dir = -f "$data/pci-dumps/$f" ? 'pci-dumps' : 'sim-dumps';
	ok($row{$f}, "$dir/$f: listed in tests/data/README.md") or next;
	SKIP: {
		skip 'lspci is not installed (Debian: pciutils)', 1 unless $have_lspci;
		my $n = () = `lspci -F '$data/$dir/$f' 2>/dev/null` =~ /^\S/mg;
		my $v = `lspci -F '$data/$dir/$f' -vvv 2>/dev/null`;
		my $msi = () = $v =~ /\] MSI: /g;
		my $msix = () = $v =~ /\] MSI-X: /g;
		is_deeply([$n, $msi, $msix], $row{$f},
			  "$f: $row{$f}[0] functions, $row{$f}[1] MSI, $row{$f}[2] MSI-X, as the README says");
	}
}
my %present = map { $_ => 1 } @real, @gen;
my @stale = grep { !$present{$_} } sort keys %row;
ok(!@stale, 'every file the README lists exists') or diag("missing: @stale");

done_testing();
