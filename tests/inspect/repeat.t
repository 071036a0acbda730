#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
#
# A dump that gives one address twice (issue 11): lspci -F lists both
# functions, and so do we, but each function's problems must appear under
# that function only (they used to appear under both), in file order, and
# the repeat is said plainly.
use strict;
use warnings;
use JSON::PP;
use Test::More;
use File::Temp qw(tempdir);
use Time::HiRes qw(time);
use FindBin;
require "$FindBin::Bin/lib.pl";

our $UMSI;
plan skip_all => "$UMSI is not built" unless -x $UMSI;

my $dir = tempdir(CLEANUP => 1);
my $n = 0;

# A function with MSI at 0x50; $broken points the list into the header.
sub fn {
	my ($device, $broken) = @_;
	my $c = cfg_new(0x8086, $device);
	cap_list($c, [0x50, 0x05]);
	cfg_w16($c, 0x52, 0x0080);              # 64-bit, one message
	$c->[0x34] = 0x20 if $broken;
	return $c;
}

sub inspect {
	my ($text, @args) = @_;
	my $f = "$dir/d" . $n++;
	write_file($f, $text);
	return run_cmd($UMSI, 'inspect', '--dump', $f, @args);
}

# Text output cut into one block per function (blank lines between).
sub blocks {
	my ($out) = @_;
	return grep { /^[0-9a-f]{4}:\S+ \[[0-9a-f]{4}:/ } split /\n\n/, $out;
}

my $broken_msg = qr/capability pointer 0x20 in the header \(0x34\) points into the standard header/;

# Healthy first, broken second: lines 1 and 19 hold the headers.
my $text = dump_text('00:03.0', fn(0x1111)) . dump_text('00:03.0', fn(0x2222, 1));
my ($rc, $out, $err) = inspect($text);
my @b = blocks($out);
is($rc, 0, 'exit 0: both decoded');
is(scalar(@b), 2, 'two functions shown at 0000:00:03.0') or diag($out);
like($b[0] // '', qr/\[8086:1111\]/, 'the first in file order first');
unlike($b[0] // '', qr/!!/, "the healthy function shows no problem (the other's used to appear under it)")
	or diag($b[0]);
like($b[1] // '', qr/\[8086:2222\].*$broken_msg/s, 'the broken one shows its own problem');
like($b[1] // '', qr/!! line 19: function 0000:00:03\.0 given again \(first at line 1\); each is decoded and shown on its own/,
     'the repeat is reported under the second, with both lines');
is(() = $out =~ /$broken_msg/g, 1, 'the problem is printed once');

# Broken first: the order of the report follows the file, not the problems.
($rc, $out, $err) = inspect(dump_text('0000:00:03.0', fn(0x2222, 1)) . dump_text('00:03.0', fn(0x1111)));
@b = blocks($out);
ok(@b == 2 && $b[0] =~ /\[8086:2222\].*$broken_msg/s && $b[1] =~ /\[8086:1111\]/ &&
   $b[1] !~ $broken_msg, 'broken first: its problem stays with it; 00:03.0 and 0000:00:03.0 are one address')
	or diag($out);

# JSON: both devices, each error tied to its function by the header line.
($rc, $out, $err) = inspect($text, '--json');
my $doc = eval { decode_json($out) };
ok($doc, 'JSON') or diag($out);
my @d = grep { $_->{bdf} eq '0000:00:03.0' } @{$doc->{devices}};
is_deeply([map { $_->{line} } @d], [1, 19], "devices carry their header lines 1 and 19");
my @e = grep { ($_->{bdf} // '') eq '0000:00:03.0' } @{$doc->{errors}};
ok(@e == 2 && !grep({ $_->{line} != 19 } @e), "both errors name line 19, the broken one")
	or diag(encode_json(\@e));

# Three times, one of them all-ones (nothing decodable): its problem is
# listed on its own, not under the other two.
my $ones = [(0xff) x 256];
($rc, $out, $err) = inspect($text . dump_text('00:03.0', $ones));
@b = blocks($out);
ok(@b == 2 && $b[0] !~ /all-ones/ && $b[1] !~ /all-ones/ &&
   $out =~ /^0000:00:03\.0: the function reads all-ones/m &&
   $out =~ /^0000:00:03\.0: line 37: function 0000:00:03\.0 given again \(first at line 1\)/m,
   'an undecodable repeat: its problems listed apart, the repeat named')
	or diag($out);

# -s selects both functions at the address.
($rc, $out, $err) = inspect($text . dump_text('00:04.0', fn(0x3333)), '-s', '00:03.0');
@b = blocks($out);
ok(@b == 2 && $out !~ /3333/, '-s shows both functions at the address, nothing else');

# A dump of 70,000 functions (as `lspci -x` of a huge machine gives, about
# 17 MB; only the first 65536 are read), nearly every one with two
# problems (64 bytes only; a row past 4096), some with MSI, some
# undecodable (all-ones), some addresses given twice. The text report must
# say what the JSON says: the same functions, each with exactly its own
# problems in order, the rest listed apart. It used to look up each
# function's problems by scanning every error (and each error's function
# by scanning every function): minutes for this dump, where --json takes
# under a second. No wall time is asserted; each run has a hang guard of
# 60 seconds, which the old text report did not meet.
{
	my $big = "$dir/big";
	my $x = "00: 86 80 d3 10 07 04 10 00 00 00 00 02 10 00 00 00\n" .
		"10: 00 00 bc fe 00 00 00 00 01 c0 00 00 00 00 00 00\n" .
		"20: 00 00 00 00 00 00 00 00 00 00 00 00 86 80 00 00\n" .
		"30: 00 00 00 00 c8 00 00 00 00 00 00 00 0a 01 00 00\n" .
		"1000: 00\n\n";
	my $msi = dump_text('X', fn(0x1111));
	my $broken = dump_text('X', fn(0x2222, 1));
	my $ones = join('', map { sprintf("%02x:%s\n", 16 * $_, ' ff' x 16) } 0 .. 3) . "\n";
	$_ =~ s/^X Device: test function\n// for $msi, $broken;
	open(my $fh, '>', $big) or die "$big: $!";
	for my $i (0 .. 69999) {
		# Every 1009th function repeats the address of one 3 before.
		my $a = $i % 1009 == 1008 ? $i - 3 : $i;
		printf $fh "%04x:%02x:%02x.%d Ethernet controller: test\n",
		       $a >> 16, ($a >> 8) & 0xff, ($a >> 3) & 0x1f, $a & 7;
		print $fh $i % 61 == 0 ? ($i % 122 ? $msi : $broken) :
			  $i % 97 == 5 ? $ones : $x;
	}
	close($fh);

	my $t0 = time;
	($rc, $out, $err) = run_cmd('timeout', '60', $UMSI, 'inspect', '--dump', $big, '--json');
	my $t1 = time;
	is($rc, 0, '70,000 functions, --json: exit 0 within the hang guard') or diag($err);
	$doc = eval { decode_json($out) };
	ok($doc, '70,000 functions: JSON') or $doc = { devices => [], errors => [] };
	my $t2 = time;
	my ($trc, $text) = run_cmd('timeout', '60', $UMSI, 'inspect', '--dump', $big);
	my $t3 = time;
	is($trc, 0, '70,000 functions, text: exit 0 within the hang guard (the old report took minutes)');
	note(sprintf('70,000 functions: text report %.1f s, --json %.1f s (information, not asserted)',
		     $t3 - $t2, $t1 - $t0));

	# What the text must show, from the JSON: a block for each function
	# with MSI, MSI-X or a problem (its problems in order), the problems
	# of no listed function after them, and the count of the others.
	my (%of, @want, @apart);
	push @{$of{"$_->{bdf} " . ($_->{line} // 0)}}, $_
		for grep { defined $_->{bdf} } @{$doc->{errors}};
	my $quiet = 0;
	my %listed;
	for my $d (@{$doc->{devices}}) {
		my $k = "$d->{bdf} " . ($d->{line} // 0);
		my @e = map { $_->{message} } @{$of{$k} // []};
		$listed{$k} = 1;
		if (!$d->{msi} && !$d->{msix} && !@e) {
			$quiet++;
			next;
		}
		push @want, join("\n", $d->{bdf}, @e);
	}
	for my $e (@{$doc->{errors}}) {
		next if defined $e->{bdf} && $listed{"$e->{bdf} " . ($e->{line} // 0)};
		push @apart, (defined $e->{bdf} ? "$e->{bdf}: " : '') . $e->{message};
	}

	# What it shows: blocks up to the last blank line, then the rest.
	my @got;
	my @paras = split /\n\n/, $text;
	my $tail = pop @paras;
	for my $p (@paras) {
		my ($head, @lines) = split /\n/, $p;
		my ($bdf) = $head =~ /^([0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]) \[/;
		push @got, join("\n", $bdf // "?$head", map { /^\t!! (.*)/ ? $1 : () } @lines);
	}
	my @tail = split /\n/, $tail // '';
	my ($shown_quiet) = ($tail[-1] // '') =~ /^(\d+) functions? without MSI or MSI-X not shown/;
	pop @tail if defined $shown_quiet;

	ok(@{$doc->{devices}} > 60000 && @{$doc->{errors}} > 120000,
	   sprintf('70,000 functions: %d decoded, %d problems', scalar @{$doc->{devices}},
		   scalar @{$doc->{errors}}));
	ok(grep({ /more than 65536 functions; the rest of the file is ignored/ } @apart),
	   '70,000 functions: the cut at 65536 is said');
	is(scalar(@got), scalar(@want), '70,000 functions: the text shows as many functions as the JSON implies');
	my ($bad) = grep { ($got[$_] // '') ne $want[$_] } 0 .. $#want;
	ok(!defined $bad, '70,000 functions: each function shows exactly its own problems, in order')
		or diag("function $bad: text\n$got[$bad]\nJSON\n$want[$bad]");
	is_deeply(\@tail, \@apart, '70,000 functions: the problems of no listed function follow, in order');
	is($shown_quiet // 0, $quiet, '70,000 functions: the count of functions not shown');
}

done_testing();
