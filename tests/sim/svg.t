#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
#
# `umsi sim --svg FILE`: the heat map of vectors per CPU. Each picture is
# parsed as XML and rendered to PNG by a real SVG renderer (rsvg-convert,
# Debian package librsvg2-bin); tests/sim/svg-cells.py reads the pixels
# back with nothing but Python's zlib. A machine whose CPU 0 is full and
# CPU 1 empty shows two different rows, in the device's colour and the
# free colour; sockets group the rows; an 8192-CPU machine renders at one
# pixel a row within a few megabytes; every example renders; and what
# cannot be drawn (no file to write, a bad sockets line) is said.
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempdir);
use FindBin;
use Time::HiRes qw(time);

my $root = "$FindBin::Bin/../..";
my $umsi = $ENV{UMSI} // "$root/" . ($ENV{BUILD} // 'build') . '/umsi';
my $cells = "$FindBin::Bin/svg-cells.py";
plan skip_all => "$umsi is not built" unless -x $umsi;

my $tmp = tempdir(CLEANUP => 1);
my $have_rsvg = system('sh', '-c', 'command -v rsvg-convert >/dev/null') == 0;
my $have_py = system('sh', '-c', 'command -v python3 >/dev/null') == 0;
my $why_not = !$have_rsvg ? 'rsvg-convert is not installed (Debian package librsvg2-bin)' :
	      !$have_py ? 'python3 is not installed' : '';

# The colours of heatmap.c.
my %colour = (device0 => '#4e79a7', device1 => '#f28e2b', free => '#ebebeb',
	      reserved => '#737373');

sub write_file { my ($p, $t) = @_; open(my $f, '>', $p) or die; print $f $t; close($f) }
sub slurp { my ($p) = @_; open(my $f, '<', $p) or return ''; local $/; my $t = <$f>; close($f); $t }

sub run {
	my (@cmd) = @_;
	my $out = `@cmd 2>$tmp/err`;
	return ($? >> 8, $out, slurp("$tmp/err"));
}

# Render $svg; return { svg => [w,h], png => [w,h], title, cell => {"r:c" => colour} }.
sub render {
	my ($svg, @want) = @_;
	my $png = "$svg.png";
	system('rsvg-convert', '-o', $png, $svg) == 0 or return { error => "rsvg-convert failed on $svg" };
	my $out = `python3 '$cells' '$svg' '$png' @want 2>&1`;
	return { error => $out } if $?;
	my %r;
	for (split /\n/, $out) {
		$r{svg} = [$1, $2] if /^svg (\d+) (\d+)$/;
		$r{png} = [$1, $2] if /^png (\d+) (\d+)$/;
		$r{title} = $1 if /^title (.*)$/;
		$r{cell}{"$1:$2"} = $3 if /^cell (\d+) (\d+) (\S+)$/;
	}
	return \%r;
}

# ---- CPU 0 full, CPU 1 empty ----------------------------------------------
# APIC ID 300 is out of an 8-bit destination's reach: uMSI puts nothing
# on CPU 1, and the device's 203 vectors fill CPU 0 (256 less 32
# exceptions, 0x80 and 20 system vectors).
write_file("$tmp/full-empty.umsi", "cpus apic 0 300\ndevice full msix=203\n");
my ($rc, $out, $err) = run($umsi, 'sim', '--svg', "$tmp/full-empty.svg", "$tmp/full-empty.umsi");
is($rc, 0, 'full/empty: exit 0') or diag($err);
like($out, qr/^vectors per CPU: min 203, median 203, max 203/m, 'CPU 0 holds all 203 vectors');
my $svg = slurp("$tmp/full-empty.svg");
like($svg, qr/<title>umsi sim \S*full-empty\.umsi: vectors per CPU<\/title>/, 'title names the machine');
like($svg, qr/2 CPUs; 1 device; 203 vectors in use by devices, 203 free, of 256 a CPU/,
     'subtitle: CPUs, vectors in use and free');
like($svg, qr/>full \(line 2\): 203 \(39\.6%\)</, 'the legend names the device and its vectors');
like($svg, qr/>free: 203 \(39\.6%\)</, 'and the free ones (CPU 1\'s)');
like($svg, qr/>reserved \(exceptions, system vectors\): 106 /, 'and the reserved ones (53 a CPU)');
like($svg, qr/No message can name CPU 1/, 'the unreachable CPU is said');
SKIP: {
	skip $why_not, 7 if $why_not;
	my $r = render("$tmp/full-empty.svg", map { ("0:$_", "1:$_") } 0x40, 0x7f, 0xa0, 0xe0);
	ok(!$r->{error}, 'well-formed XML, rendered by rsvg-convert') or diag($r->{error});
	is_deeply($r->{png}, $r->{svg}, 'the PNG has the SVG\'s size');
	ok($r->{png}[0] >= 800 && $r->{png}[0] <= 2000 && $r->{png}[1] >= 150 && $r->{png}[1] <= 1200,
	   "a legible size: @{$r->{png} // []}");
	is($r->{cell}{'0:64'}, $colour{device0}, 'CPU 0, vector 0x40: the device\'s colour');
	is($r->{cell}{'1:64'}, $colour{free}, 'CPU 1, vector 0x40: free');
	isnt($r->{cell}{"0:$_"}, $r->{cell}{"1:$_"}, sprintf('vector 0x%02x: a full CPU is not an empty one', $_))
		for 0xe0;
	is_deeply([map { $r->{cell}{"0:$_"} } 0x40, 0x7f, 0xa0, 0xe0], [($colour{device0}) x 4],
		  'CPU 0 is the device\'s colour across its vectors');
}

# ---- sockets -------------------------------------------------------------------
write_file("$tmp/sockets.umsi", "cpus 16\nsockets 2\ndevice nvme msix=65 vectors=33 count=3\n" .
				"device nic msix=64 spread count=2\n");
($rc, $out, $err) = run($umsi, 'sim', '--svg', "$tmp/sockets.svg", "$tmp/sockets.umsi");
is($rc, 0, 'sockets: exit 0') or diag($err);
like($out, qr/^machine: 16 CPUs .*, 2 sockets,/m, 'the machine line says the sockets');
$svg = slurp("$tmp/sockets.svg");
like($svg, qr/data-first-row="0" data-rows="8".*data-first-row="8" data-rows="8"/s,
     'two groups of 8 rows');
like($svg, qr/>socket 0<.*>socket 1</s, 'labelled socket 0 and socket 1');
like($svg, qr/16 CPUs in 2 sockets/, 'the subtitle says so');
SKIP: {
	skip $why_not, 2 if $why_not;
	my $r = render("$tmp/sockets.svg", '7:5', '8:5', '8:200');
	ok(!$r->{error}, 'sockets: renders') or diag($r->{error});
	is_deeply([@{$r->{cell}}{'7:5', '8:5'}], [$colour{reserved}, $colour{reserved}],
		  'the last row of socket 0 and the first of socket 1 are both drawn');
}

# Bad sockets lines, said with the line.
for my $case (["cpus 8\nsockets 3\n", qr/:2: sockets 3: 8 CPUs do not split into 3 sockets of the same size/],
	      ["cpus 8\nsockets 0\n", qr/:2: 'sockets' takes a count \(1-8192\), not '0'/],
	      ["cpus 8\nsockets 2\nsockets 2\n", qr/:3: 'sockets' given twice \(lines 2 and 3\)/],
	      ["sockets 2 3\ncpus 8\n", qr/:1: 'sockets' takes a count/],
	      ["sockets 16\ncpus 8\n", qr/:1: sockets 16: 8 CPUs do not split into 16 sockets/]) {
	write_file("$tmp/bad.umsi", $case->[0] . "device d msix=1\n");
	($rc, $out, $err) = run($umsi, 'sim', "$tmp/bad.umsi");
	is($rc, 2, "bad sockets line: exit 2 ($case->[0] =~ s/\n/; /gr)");
	like($err, $case->[1], 'and the message says what is wrong');
}

# ---- what cannot be written is said --------------------------------------------
($rc, $out, $err) = run($umsi, 'sim', '--svg', "$tmp/no/such/dir/x.svg", "$tmp/full-empty.umsi");
is($rc, 2, 'an unwritable --svg file: exit 2');
like($err, qr/umsi sim: cannot write \S*no\/such\/dir\/x\.svg: No such file or directory/, 'and says why');
($rc, undef, $err) = run($umsi, 'sim', "$tmp/full-empty.umsi", '--svg');
is($rc, 2, '--svg without a file: exit 2');
like($err, qr/--svg needs a file name/, 'and says so');
SKIP: {
	skip '/dev/full is absent', 2 unless -e '/dev/full';
	($rc, undef, $err) = run($umsi, 'sim', '--svg', '/dev/full', "$tmp/full-empty.umsi");
	is($rc, 2, 'a full disk: exit 2');
	like($err, qr/cannot write \/dev\/full: No space left on device/, 'and says so');
}

# A file name that is no XML text (markup, a byte that is not UTF-8) still
# gives a well-formed picture: such bytes are '?'.
my $odd = "$tmp/a&b<\xe9>.umsi";
write_file($odd, "cpus 2\ndevice x msi=1\n");
($rc, undef, $err) = run($umsi, 'sim', '--svg', "$tmp/odd.svg", "'$odd'");
is($rc, 0, 'an odd file name: exit 0') or diag($err);
like(slurp("$tmp/odd.svg"), qr/<title>umsi sim \S*a&amp;b&lt;\?&gt;\.umsi: vectors per CPU<\/title>/,
     'its name escaped, the byte above 0x7f a ?');
SKIP: {
	skip $why_not, 1 if $why_not;
	ok(!render("$tmp/odd.svg")->{error}, 'and the picture is well-formed XML');
}

# ---- 8192 CPUs -----------------------------------------------------------------
write_file("$tmp/8192.umsi", "cpus 8192\nsockets 4\nplatform x2apic ext-dest-id\n" .
	   "device nic vendor=0x15b3 device=0x101d msix=2048 vectors=2000 count=50\n" .
	   "device nvme msix=2048 vectors=1000 spread count=40\n" .
	   "device xhci msi=32 count=300\n" .
	   join('', map { "device d$_ msix=" . (3 + 2 * $_) . " count=100\n" } 1 .. 12));
my $t0 = time;
($rc, $out, $err) = run($umsi, 'sim', '--svg', "$tmp/8192.svg", "$tmp/8192.umsi");
my $took = time - $t0;
is($rc, 0, '8192 CPUs: exit 0') or diag($err);
my $size = -s "$tmp/8192.svg";
ok($size && $size < 4 << 20, "8192 CPUs x 256 vectors: the SVG is $size bytes (under 4 MiB)");
ok($took < 60, sprintf('8192 CPUs: run and picture in %.1f s', $took));
$svg = slurp("$tmp/8192.svg");
is(scalar(() = $svg =~ /data-first-row=/g), 4, 'four socket groups');
like($svg, qr/scale\(3,1\)/, 'one pixel a row, three a vector');
like($svg =~ s/<\/text>\n<text [^>]*>/ /gr, qr/The 10 device lines with the most vectors have a colour each; the other 5 share one/,
     'more device lines than colours: said');
like($svg, qr/>other devices: \d+ /, 'and the rest share "other devices"');
SKIP: {
	skip $why_not, 3 if $why_not;
	my $r = render("$tmp/8192.svg", '0:40', '1:40', '0:250');
	ok(!$r->{error}, '8192 CPUs: renders') or diag($r->{error});
	is_deeply($r->{png}, $r->{svg}, "8192 CPUs: a PNG of the SVG's size (@{$r->{png} // []})");
	ok($r->{png}[1] > 8192, 'a row for every CPU');
}

# ---- every example ---------------------------------------------------------------
opendir(my $d, "$root/examples") or die;
for my $ex (sort grep { /\.umsi$/ } readdir($d)) {
	next if $ex eq 'million-vectors.umsi' && !$ENV{UMSI_SLOW};
	($rc, undef, $err) = run($umsi, 'sim', '--svg', "$tmp/$ex.svg", "$root/examples/$ex");
	ok(-s "$tmp/$ex.svg", "$ex: drawn (exit $rc)") or diag($err);
	SKIP: {
		skip $why_not, 1 if $why_not;
		my $r = render("$tmp/$ex.svg");
		ok(!$r->{error} && $r->{png}[0], "$ex: well-formed and rendered") or diag($r->{error});
	}
}
closedir($d);

# The committed picture of the README says what the tool says now: the
# same title, subtitle and legend (not every rectangle: placement may
# change with the allocator, what is counted may not).
my $committed = "$root/docs/vectors-example.svg";
SKIP: {
	skip 'docs/vectors-example.svg is absent', 2 unless -e $committed;
	run($umsi, 'sim', '--svg', "$tmp/example.svg", "$root/examples/storage-server.umsi");
	my $words = sub {
		my ($t) = @_;
		$t =~ s/umsi sim \S*storage-server\.umsi/umsi sim examples\/storage-server.umsi/g;
		return [$t =~ /<text x="(?:10|964)" [^>]*>([^<]*)</g];
	};
	my $now = $words->(slurp("$tmp/example.svg"));
	ok(@$now > 4, 'the example has a title, a subtitle and a legend');
	is_deeply($words->(slurp($committed)), $now,
		  'docs/vectors-example.svg says what `umsi sim --svg examples/storage-server.umsi` says now');
}

done_testing();
