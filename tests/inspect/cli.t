#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
#
# The command line of `umsi inspect`: help, selectors (-s), exit statuses,
# and the JSON shape of issue 7.
use strict;
use warnings;
use JSON::PP;
use Test::More;
use File::Temp qw(tempdir);
use FindBin;
require "$FindBin::Bin/lib.pl";

our ($UMSI, $DUMPS);
plan skip_all => "$UMSI is not built" unless -x $UMSI;

my ($rc, $out, $err) = run_cmd($UMSI, 'inspect', '--help');
is($rc, 0, '--help: exit 0');
like($out, qr/usage: umsi inspect/, '--help: usage');

($rc, $out, $err) = run_cmd($UMSI, 'inspect', '--frobnicate');
is($rc, 2, 'unknown option: exit 2');

for my $bad ('1f', '00:1f', '00:20.0', '00:1f.8', '*:1f.0', '00:*.0', '00:1f.*',
	     '0:0:0:0.0', '00:1f.', '.3', 'g0:00.0', '00000:00:00.0', '00:1f.3x',
	     '100:00.0', '', '00:1f.3.1', ' 00:1f.3') {
	($rc, $out, $err) = run_cmd($UMSI, 'inspect', '--dump', '/dev/null', '-s', $bad);
	is($rc, 2, "selector '$bad': exit 2");
	like($err, qr/malformed selector '\Q$bad\E'.*\[\[domain:\]bus:\]dev\.fn/, "selector '$bad': says what is expected");
}
($rc, $out, $err) = run_cmd($UMSI, 'inspect', '-s');
is($rc, 2, '-s without a value: exit 2');

my $dir = tempdir(CLEANUP => 1);
($rc, $out, $err) = run_cmd($UMSI, 'inspect', '--dump', "$dir/missing");
is($rc, 1, 'missing file: exit 1');
like($err, qr/cannot read .*missing/, 'missing file: says so');

SKIP: {
	my $f = "$DUMPS/cap-vendor-virtio";
	skip "no $f", 12 unless -f $f;
	for my $sel ('00:09.0', '0000:00:09.0', '9.0', '0:9.0', '0000:00:09.0') {
		($rc, $out) = run_cmd($UMSI, 'inspect', '--dump', $f, '--json', '-s', $sel);
		my $doc = decode_json($out);
		is_deeply([map { $_->{bdf} } @{$doc->{devices}}], ['0000:00:09.0'], "-s $sel selects one function");
	}
	($rc, $out, $err) = run_cmd($UMSI, 'inspect', '--dump', $f, '--json', '-s', '00:1f.7');
	is($rc, 1, 'absent function: exit 1');
	like(decode_json($out)->{errors}[0]{message}, qr/no function 0000:00:1f\.7/, 'absent function: says so');

	# The JSON shape of issue 7.
	($rc, $out) = run_cmd($UMSI, 'inspect', '--dump', $f, '--json');
	my $doc = decode_json($out);
	my ($d) = grep { $_->{bdf} eq '0000:00:09.0' } @{$doc->{devices}};
	is_deeply([@$d{qw(vendor device msi)}], ['0x1af4', '0x1000', undef], 'vendor, device, msi null');
	my $x = $d->{msix};
	is_deeply([@$x{qw(cap table_size table_bar table_offset pba_bar pba_offset entries)}],
		  ['0x84', 3, 1, '0x0', 1, '0x800', undef], 'msix fields');
	ok(JSON::PP::is_bool($x->{enabled}) && JSON::PP::is_bool($x->{function_mask}), 'booleans are booleans');
	ok(ref $doc->{errors} eq 'ARRAY', 'errors is a list');
	unlike($out, qr/"0x[0-9a-f]*[A-F]/, 'hex is lowercase');
}
# The man page renders without warnings.
SKIP: {
	our $ROOT;
	skip 'groff is not installed', 1
		unless system('sh', '-c', 'command -v groff >/dev/null') == 0;
	my ($grc, $gout, $gerr) = run_cmd('groff', '-man', '-ww', '-z', "$ROOT/docs/umsi.1");
	ok($grc == 0 && $gerr eq '', 'docs/umsi.1: groff -man -ww is silent') or diag($gerr);
}
done_testing();
