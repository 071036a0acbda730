#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
#
# Hostile and unusual dumps: each problem is reported naming the device and
# what is wrong, the other functions of the file are still decoded, and the
# exit status is non-zero only when nothing could be decoded. Also the x86
# message decoding of crafted MSI messages (extended destination ID,
# logical mode, remappable format, multiple messages).
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

# A healthy function with MSI (64-bit, maskable) at 0x50 and MSI-X at 0x70.
sub good_fn {
	my $c = cfg_new(0x8086, 0x10d3);
	cfg_w16($c, 4, 0x0006);                 # Memory, Bus Master
	cfg_w32($c, 0x10, 0xfebc0000);          # BAR0: 32-bit memory
	cfg_w32($c, 0x1c, 0x0000c001);          # BAR3: I/O
	cap_list($c, [0x50, 0x05], [0x70, 0x11]);
	cfg_w16($c, 0x52, 0x0180 | 0x0004 | 0x0001); # maskable, 64-bit, MMC 4, enabled
	cfg_w32($c, 0x54, 0xfee01000);
	cfg_w32($c, 0x58, 0);
	cfg_w16($c, 0x5c, 0x0041);
	cfg_w32($c, 0x60, 0x2);                 # mask bits
	cfg_w32($c, 0x64, 0x1);                 # pending bits
	cfg_w16($c, 0x72, 0x8000 | 4);          # MSI-X enabled, 5 entries
	cfg_w32($c, 0x74, 0x0000);              # table: BAR0 offset 0
	cfg_w32($c, 0x78, 0x2000);              # PBA: BAR0 offset 0x2000
	return $c;
}

# Run on a dump text; return (rc, json doc, stderr).
sub inspect_text {
	my ($text, @args) = @_;
	my $f = "$dir/d" . $n++;
	write_file($f, $text);
	my ($rc, $out, $err) = run_cmd($UMSI, 'inspect', '--dump', $f, '--json', @args);
	my $doc = eval { decode_json($out) };
	return ($rc, $doc, $err);
}

sub errs_for {
	my ($doc, $bdf) = @_;
	return join("\n", map { $_->{message} }
		    grep { ($_->{bdf} // '') eq $bdf } @{$doc->{errors}});
}

sub dev {
	my ($doc, $bdf) = @_;
	my ($d) = grep { $_->{bdf} eq $bdf } @{$doc->{devices}};
	return $d;
}

# --- a healthy function decodes completely ---------------------------------
{
	my ($rc, $doc) = inspect_text(dump_text('00:03.0', good_fn()));
	is($rc, 0, 'healthy: exit 0');
	my $d = dev($doc, '0000:00:03.0');
	is_deeply([@{$d->{msi}}{qw(cap count_cap count_enabled address data mask pending)}],
		  ['0x50', 4, 1, '0xfee01000', '0x41', '0x2', '0x1'], 'healthy: MSI fields');
	ok($d->{msi}{enabled} && $d->{msi}{addr64} && $d->{msi}{maskable}, 'healthy: MSI flags');
	is_deeply([@{$d->{msi}{message}}{qw(dest_id dest_mode vector delivery_mode trigger remapped)}],
		  [1, 'physical', 65, 'fixed', 'edge', JSON::PP::false], 'healthy: MSI message decoded');
	is_deeply([@{$d->{msix}}{qw(cap table_size table_bar table_offset pba_bar pba_offset entries)}],
		  ['0x70', 5, 0, '0x0', 0, '0x2000', undef], 'healthy: MSI-X fields');
	like($d->{msix}{entries_reason}, qr/dump holds configuration space only/, 'healthy: entries_reason');
	is(scalar @{$doc->{errors}}, 0, 'healthy: no errors');
}

# --- message decoding -------------------------------------------------------
{
	my $c = good_fn();
	cfg_w32($c, 0x54, 0xfee12340);          # dest 0x12, bits 11:5 = 0x1a
	cfg_w16($c, 0x5c, 0xc1b3);              # level, assert, fixed, vector 0xb3
	cfg_w16($c, 0x52, 0x0180 | 0x0006 | 0x0020 | 1); # MMC 8, MME 4
	my ($rc, $doc) = inspect_text(dump_text('00:03.0', $c));
	my $m = dev($doc, '0000:00:03.0')->{msi};
	is($m->{message}{dest_id}, 0x1a12, 'extended destination ID: bits 11:5 are dest 14:8');
	is($m->{message}{trigger}, 'level', 'level trigger');
	is_deeply([$m->{count_enabled}, $m->{count_cap}], [4, 8], 'Count=4/8 as lspci prints it');

	cfg_w32($c, 0x54, 0xfee0300c);          # logical, RH, dest 3
	cfg_w16($c, 0x5c, 0x0120);              # lowest priority, vector 0x20
	($rc, $doc) = inspect_text(dump_text('00:03.0', $c));
	$m = dev($doc, '0000:00:03.0')->{msi}{message};
	is_deeply([@$m{qw(dest_id dest_mode redirection_hint delivery_mode vector)}],
		  [3, 'logical', JSON::PP::true, 'lowest-priority', 32], 'logical, RH, lowest priority');

	cfg_w32($c, 0x54, 0xfee02a10);          # remappable format, handle 0x150
	cfg_w16($c, 0x5c, 0x0000);
	($rc, $doc) = inspect_text(dump_text('00:03.0', $c));
	$m = dev($doc, '0000:00:03.0')->{msi}{message};
	ok($m->{remapped}, 'remappable format recognised');
	is($m->{ir_handle}, 0x150, 'IR handle from bits 19:5');
	ok(!defined $m->{dest_id}, 'no destination claimed for a remapped message');

	cfg_w32($c, 0x54, 0x12345678);
	($rc, $doc) = inspect_text(dump_text('00:03.0', $c));
	$m = dev($doc, '0000:00:03.0')->{msi}{message};
	ok(!$m->{x86} && !defined $m->{vector}, 'non-x86 address: not decoded as LAPIC');

	my ($rc2, $out) = run_cmd($UMSI, 'inspect', '--dump', "$dir/d" . ($n - 1));
	like($out, qr/Capabilities: \[50\] MSI: Enable\+ Count=4\/8 Maskable\+ 64bit\+/,
	     'text: lspci -vv wording');
}

# --- capability loop ----------------------------------------------------------
{
	my $c = good_fn();
	cfg_w8($c, 0x71, 0x50);                 # MSI-X points back at MSI
	my ($rc, $doc) = inspect_text(dump_text('00:04.0', $c) . dump_text('00:05.0', good_fn()));
	is($rc, 0, 'loop: exit 0 (something decoded)');
	like(errs_for($doc, '0000:00:04.0'), qr/loops/, 'loop: reported for the device');
	ok(dev($doc, '0000:00:04.0')->{msi} && dev($doc, '0000:00:04.0')->{msix},
	   'loop: capabilities before the loop decoded');
	ok(dev($doc, '0000:00:05.0')->{msix}, 'loop: next device decoded');
}

# --- pointers out of range ---------------------------------------------------
{
	my $c = good_fn();
	cfg_w8($c, 0x34, 0x20);
	my ($rc, $doc) = inspect_text(dump_text('00:06.0', $c));
	like(errs_for($doc, '0000:00:06.0'), qr/0x20 .*standard header/, 'pointer into the header');
	is($rc, 0, 'pointer into the header: header still decoded, exit 0');

	$c = good_fn();
	cfg_w8($c, 0x51, 0xc0);                 # MSI -> 0xc0, beyond 8 rows
	($rc, $doc) = inspect_text(dump_text('00:07.0', $c, 8));
	like(errs_for($doc, '0000:00:07.0'), qr/0xc0 .*past the 128 bytes/, 'pointer past the bytes dumped');
	ok(dev($doc, '0000:00:07.0')->{msi}, 'MSI before the bad pointer still decoded');
}

# --- chain broken (ID 0xff) and unknown header types: lspci stops, so do we
{
	my $c = good_fn();
	cap_list($c, [0x40, 0xff], [0x50, 0x05]);
	my ($rc, $doc) = inspect_text(dump_text('00:06.0', $c));
	like(errs_for($doc, '0000:00:06.0'), qr/capability at 0x40 has ID 0xff \(chain broken/, 'ID 0xff: chain broken');
	is(dev($doc, '0000:00:06.0')->{msi}, undef, 'ID 0xff: nothing followed past it, as lspci');

	$c = good_fn();
	$c->[0x0e] = 0x83;                      # multi-function, header type 3
	($rc, $doc) = inspect_text(dump_text('00:06.0', $c));
	like(errs_for($doc, '0000:00:06.0'), qr/unknown header type 0x03/, 'unknown header type reported');
	ok(!dev($doc, '0000:00:06.0')->{msi}, 'unknown header type: no capabilities, as lspci');
	is($rc, 0, 'unknown header type: IDs still decoded, exit 0');
}

# --- capability running off the end ----------------------------------------
{
	my $c = good_fn();
	cap_list($c, [0xf0, 0x05]);
	cfg_w16($c, 0xf2, 0x0180);              # 64-bit + mask: needs 0xf0-0x107
	my ($rc, $doc) = inspect_text(dump_text('00:08.0', $c));
	like(errs_for($doc, '0000:00:08.0'), qr/MSI capability at 0xf0 runs past/, 'MSI past the end of config space');
	is(dev($doc, '0000:00:08.0')->{msi}, undef, 'that MSI is not invented');
}

# --- impossible MSI-X table locations -----------------------------------------
{
	my %cases = (
		'reserved BIR'  => [0x7, 0x2000, qr/vector table is in BAR 7, which is a reserved BIR/],
		'I/O BAR'       => [0x3, 0x2000, qr/vector table is in BAR 3, which is an I\/O BAR/],
		'overlap'       => [0x1000, 0x1010, qr/overlap/],
	);
	for my $name (sort keys %cases) {
		my ($t, $p, $re) = @{$cases{$name}};
		my $c = good_fn();
		cfg_w32($c, 0x74, $t);
		cfg_w32($c, 0x78, $p);
		my ($rc, $doc) = inspect_text(dump_text('00:09.0', $c));
		like(errs_for($doc, '0000:00:09.0'), $re, "MSI-X table: $name");
		is($rc, 0, "MSI-X table: $name: exit 0");
	}
	my $c = good_fn();
	cfg_w32($c, 0x10, 0xfebc0004);          # BAR0 64-bit: BAR1 is its upper half
	cfg_w32($c, 0x74, 0x1);
	my ($rc, $doc) = inspect_text(dump_text('00:09.0', $c));
	like(errs_for($doc, '0000:00:09.0'), qr/BAR 1, which is the upper half of a 64-bit BAR/,
	     'MSI-X table in the upper half of a 64-bit BAR');
}

# --- truncated and malformed files ------------------------------------------
{
	my $text = dump_text('00:0a.0', good_fn()) . dump_text('00:0b.0', good_fn());
	$text = substr($text, 0, length($text) - 200);       # cut mid-row
	my ($rc, $doc) = inspect_text($text);
	is($rc, 0, 'truncated: exit 0');
	like(errs_for($doc, '0000:00:0b.0'), qr/row 0x[0-9a-f]+ holds \d+ of 16 bytes/, 'truncated row reported');
	ok(dev($doc, '0000:00:0a.0')->{msix}, 'truncated: first device intact');

	my $short = dump_text('00:0c.0', good_fn(), 3);
	($rc, $doc) = inspect_text($short);
	is($rc, 1, 'only 48 bytes: nothing decoded, exit 1');
	like(errs_for($doc, '0000:00:0c.0'), qr/only 48 bytes .*64-byte standard header/, 'short header reported');

	($rc, $doc) = inspect_text(dump_text('00:0d.0', good_fn(), 4));
	is($rc, 0, 'lspci -x dump (64 bytes): exit 0');
	like(errs_for($doc, '0000:00:0d.0'), qr/only the first 64 bytes/, 'lspci -x: says capabilities are beyond');
	ok(!dev($doc, '0000:00:0d.0')->{capabilities_read}, 'lspci -x: capabilities_read false');

	my $c = good_fn();
	$c->[$_] = 0xff for 0 .. 255;
	($rc, $doc) = inspect_text(dump_text('00:0e.0', $c) . dump_text('00:0f.0', good_fn()));
	like(errs_for($doc, '0000:00:0e.0'), qr/reads all-ones \(vendor ID 0xffff\)/, 'all-ones function reported');
	ok(!dev($doc, '0000:00:0e.0') && dev($doc, '0000:00:0f.0'), 'all-ones function not listed, the next one is');
	($rc, $doc) = inspect_text(dump_text('00:0e.0', $c));
	is($rc, 1, 'only an all-ones function: nothing decoded, exit 1');

	$c = good_fn();
	cfg_w8($c, 0x71, 0xe0);                 # MSI-X -> 0xe0, a row the dump lacks
	my $t = dump_text('00:0e.0', $c);
	$t =~ s/^e0:.*\n//m;
	($rc, $doc) = inspect_text($t);
	like(errs_for($doc, '0000:00:0e.0'), qr/0xe0 in the capability at 0x70 leads to bytes that read all-ones \(missing from the dump/,
	     'pointer to a row missing from the dump');

	($rc, $doc) = inspect_text("00:10.0 x\n1000: 00 11\n" . substr(dump_text('00:10.0', good_fn()), 10));
	like(errs_for($doc, '0000:00:10.0'), qr/beyond the 4096 bytes/, 'row past 4096 bytes reported');

	($rc, $doc) = inspect_text("00:1f.9 bad function\n00: 00\n" . dump_text('00:11.0', good_fn()));
	like(errs_for($doc, ''), qr/00:1f\.9' is not a PCI address/, 'function 9 rejected');
	ok(dev($doc, '0000:00:11.0'), 'and the next device decoded');

	for my $junk ("", "\0\1\2garbage\xff\n", "hello\nworld\n", "00: 11 22\n") {
		my ($rc2, $doc2) = inspect_text($junk);
		is($rc2, 1, 'no device in ' . length($junk) . '-byte junk: exit 1');
		ok($doc2 && @{$doc2->{errors}}, 'and an error says why');
	}
	my $bin = join('', map { chr(($_ * 7919) & 0xff) } 0 .. 65535);
	my ($rc3, $doc3) = inspect_text($bin);
	ok(defined $doc3, 'binary noise: still a JSON document');
}

# --- the broken dump from pciutils ----------------------------------------
{
	our $DUMPS;
	SKIP: {
		skip "$DUMPS/broken-ecaps is absent", 1 unless -f "$DUMPS/broken-ecaps";
		my ($rc) = run_cmd($UMSI, 'inspect', '--dump', "$DUMPS/broken-ecaps");
		is($rc, 0, 'broken-ecaps decodes');
	}
}

done_testing();
