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

done_testing();
