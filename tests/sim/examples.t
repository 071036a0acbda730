#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
#
# TAP: every machine file in examples/ does what its comment says. Each
# comment ends with the claims a run must bear out:
#
#   exit status: N          the exit status of `umsi sim FILE`
#   prints: TEXT            a line of the text report holds TEXT (runs of
#                           blanks count as one space, on both sides)
#   slow: yes               run only with UMSI_TEST_SLOW=1 (make bench-sim
#                           runs it anyway)
#
# and the command line `umsi sim examples/FILE` naming the file itself. An
# example without an exit status and at least one printed line fails: a
# new example must say what it shows.
use strict;
use warnings;
use Test::More;
use FindBin;

my $root = "$FindBin::Bin/../..";
my $umsi = $ENV{UMSI} // "$root/" . ($ENV{BUILD} // 'build') . '/umsi';
my @files = sort glob("$root/examples/*.umsi");
ok(@files >= 4, scalar(@files) . ' example machine files');

sub squash { my $s = shift; $s =~ s/\s+/ /g; $s =~ s/^ | $//g; return $s; }

for my $file (@files) {
	(my $name = $file) =~ s{.*/}{};
	open(my $fh, '<', $file) or die "$file: $!";
	my (@prints, $status, $slow, $names_itself);
	while (my $l = <$fh>) {
		last unless $l =~ /^#/ || $l =~ /^\s*$/;
		$status = $1 if $l =~ /^#\s*exit status:\s*(\d+)\s*$/;
		push @prints, squash($1) if $l =~ /^#\s*prints:\s*(.*\S)\s*$/;
		$slow = 1 if $l =~ /^#\s*slow:\s*yes\s*$/;
		$names_itself = 1 if $l =~ m{^#\s*umsi sim examples/\Q$name\E\s*$};
	}
	close($fh);
	ok(defined($status) && @prints, "$name: its comment claims an exit status and output")
		or next;
	ok($names_itself, "$name: its comment shows the command for itself");
	SKIP: {
		skip("$name: slow (UMSI_TEST_SLOW=1 runs it; so does make bench-sim)",
		     1 + @prints) if $slow && !$ENV{UMSI_TEST_SLOW};
		my $out = `$umsi sim $file 2>&1`;
		my $rc = $? >> 8;
		is($rc, $status, "$name: exit status $status");
		my @lines = map { squash($_) } split(/\n/, $out);
		for my $p (@prints) {
			ok((grep { index($_, $p) >= 0 } @lines),
			   "$name: prints '$p'")
				or diag("output was:\n$out");
		}
	}
}
done_testing();
