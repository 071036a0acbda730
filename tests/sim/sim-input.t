#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
#
# TAP: `umsi sim` on hostile and careless machine files (issue 11). Each
# must end in exit status 2 and one line "umsi sim: FILE:LINE: problem" on
# standard error: never a crash, a silent cut, or a machine other than
# the one written. The regressions of issue 11 come first.
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempdir);
use JSON::PP;
use FindBin;

my $root = "$FindBin::Bin/../..";
my $umsi = $ENV{UMSI} // "$root/" . ($ENV{BUILD} // 'build') . '/umsi';
my $dir = tempdir(CLEANUP => 1);
my $k = 0;

# Write @text to a fresh file; return its name.
sub machine {
	my $f = sprintf("%s/m%03d.umsi", $dir, $k++);
	open(my $fh, '>:raw', $f) or die "$f: $!";
	print $fh @_;
	close($fh);
	return $f;
}

# Run umsi with a time limit; return (exit status, stdout, stderr). A
# signal (a crash) or the time limit shows as status 128 + signal.
sub run_umsi {
	my @args = @_;
	my ($out, $err) = ("$dir/out", "$dir/err");
	my $pid = fork() // die "fork: $!";
	if (!$pid) {
		open(STDOUT, '>', $out) or die;
		open(STDERR, '>', $err) or die;
		alarm(60);
		exec($umsi, @args) or die "exec: $!";
	}
	waitpid($pid, 0);
	my $rc = $? & 127 ? 128 + ($? & 127) : $? >> 8;
	local $/;
	open(my $o, '<', $out) or die; my $so = <$o> // ''; close($o);
	open(my $e, '<', $err) or die; my $se = <$e> // ''; close($e);
	return ($rc, $so, $se);
}
my ($rc, $out, $err);

# Bad input: status 2, exactly one line naming file and line.
sub rejects {
	my ($file, $re, $what) = @_;
	my ($rc, $so, $se) = run_umsi('sim', $file);
	my $ok = $rc == 2 && $se =~ /\Aumsi sim: \Q$file\E$re/ &&
		 ($se =~ tr/\n//) == 1;
	ok($ok, $what) or diag("status $rc, stderr: " . substr($se, 0, 400));
}

# 1. cmdline: the join of the words is bounded (it used to run past its
# 1024-byte buffer on the stack, over the file name and beyond).
my $long = join(' ', ('A' x 100) x 40);
rejects(machine("cpus 2\ncmdline $long\ndevice e msi=1\n"),
	qr/:2: cmdline too long: at most 1023 characters\n/,
	'cmdline of 4039 characters: exit 2, named, nothing overwritten');
my $fits = join(' ', ('B' x 99) x 10) . ' ' . ('C' x 23);
rejects(machine("cpus 2\ncmdline $fits x\n"),
	qr/:2: cmdline too long/, 'cmdline of 1024 characters: one too many');
($rc, $out, $err) = run_umsi('sim', '--json',
			     machine("cpus 2\ncmdline $fits\ndevice e msi=1\n"));
is($rc, 0, 'cmdline of exactly 1023 characters is taken') or diag($err);

# 2. The total of count= is 64-bit and checked at each device line (a
# 32-bit total used to wrap past 2^32, pass the limit, and overrun the
# instance array).
my $wrap = "cpus 2\n" . join('', map { "device d$_ msi=1 count=65536\n" } 0 .. 65535)
	 . "device z msi=1 count=2\n";
rejects(machine($wrap),
	qr/:2: 65536 device instances; at most 8160 fit \(32 slots on each of buses 1-255 of domain 0\)\n/,
	'counts adding up to 2^32 + 2: exit 2 at the first line past the limit');
rejects(machine("cpus 2\ndevice a msi=1 count=8000\ndevice b msi=1 count=161\n"),
	qr/:3: 8161 device instances; at most 8160 fit/,
	'two counts within limits whose sum is not: the second line is named');
rejects(machine("cpus 2\ndevice a msi=1 count=4294967296\n"),
	qr/:2: bad value for 'count': '4294967296'/, 'count= past 32 bits');
rejects(machine("cpus 2\ndevice a msi=1 count=0\n"),
	qr/:2: count= must be at least 1\n/, 'count=0');

# 3. Instances past 8160 used to land on bus 256, shown as domain 0001.
rejects(machine("cpus 2\ndevice a intx=A count=8160\ndevice b intx=A\n"),
	qr/:3: 8161 device instances; at most 8160 fit/,
	'instance 8161 refused: the limit is 8160, not 8192');
($rc, $out, $err) = run_umsi('sim', '--json',
			     machine("cpus 2\ndevice a msi=1 count=8160\n"));
my $j = eval { decode_json($out) };
ok($j && @{$j->{devices}} == 8160 &&
   !grep({ $_->{bdf} !~ /^0000:(0[1-9a-f]|[1-9a-f][0-9a-f]):[01][0-9a-f]\.0$/ } @{$j->{devices}}) &&
   $j->{devices}[-1]{bdf} eq '0000:ff:1f.0',
   '8160 instances: every one on domain 0, buses 01-ff, the last at 0000:ff:1f.0')
	or diag("status $rc; last: " . ($j ? $j->{devices}[-1]{bdf} : substr($err, 0, 200)));

# NUL bytes used to end the file silently (here before a bad line).
rejects(machine("cpus 2\ndevice a msi=1\n\0device b msi=3\n"),
	qr/:3: NUL byte at offset 22: a machine file is text\n/,
	'NUL byte: exit 2 with its line and byte offset');
rejects(machine("\0"), qr/:1: NUL byte at offset 0/, 'NUL as the first byte');

# Words past 4096 on a line used to be dropped (with a bad setting there);
# now the longest line that can make sense (cpus apic with an ID for each
# of 8192 CPUs, and one more) is the limit, and a line past it is refused.
rejects(machine("cpus 2\ndevice a msi=1 " . ('addr64 ' x 4100) . "msi=3\n"),
	qr/:2: 'addr64' given twice\n/, '4100 words: every one is read (the setting after them too)');
rejects(machine("cpus 2\ndevice a msi=1 " . ('addr64 ' x 8200) . "msi=3\n"),
	qr/:2: more than 8195 words on one line\n/, 'too many words: the line is refused');
my $ids = join(' ', 0 .. 8191);
($rc, $out, $err) = run_umsi('sim', '--json', machine("cpus apic $ids\ndevice a msi=1\n"));
is($rc, 0, 'cpus apic with 8192 IDs (8194 words) is taken') or diag($err);

# A second cpus line used to replace the first.
rejects(machine("cpus 4\ndevice a msi=1\n\ncpus 2\n"),
	qr/:4: 'cpus' given twice \(lines 1 and 4\)\n/, "'cpus' twice: both lines named");
rejects(machine("cpus 4\ncmdline pci_nomsi\ncmdline device_msi=0x1\n"),
	qr/:3: 'cmdline' given twice \(lines 2 and 3\)\n/, "'cmdline' twice");
rejects(machine("cpus 4\ndevice a msix=4 msix=8\n"),
	qr/:2: 'msix' given twice\n/, 'a device setting twice');

# Limits the simulator and the x2APIC architecture set.
rejects(machine("cpus 8193\n"), qr/:1: 8193 CPUs; the simulator takes at most 8192\n/,
	'more CPUs than the simulator has');
rejects(machine("cpus 99999999999999999999999\n"), qr/:1: 'cpus' takes a count \(1-8192\)/,
	'a CPU count past 64 bits');
rejects(machine("cpus 0\n"), qr/:1: 'cpus' takes a count \(1-8192\)/, 'no CPUs');
($rc, $out, $err) = run_umsi('sim', '--json',
			     machine("cpus 8192\nplatform x2apic ext-dest-id\ndevice a msix=64 count=16\n"));
$j = eval { decode_json($out) };
ok($rc == 0 && $j && @{$j->{cpus}} == 8192 && $j->{spread}{cpus} == 8192 &&
   $j->{fired} == 1024 && $j->{handled} == 1024,
   'cpus 8192 (the limit) is built and run: 1024 vectors fired and handled')
	or diag("status $rc: " . substr($err, 0, 300));
rejects(machine("cpus apic " . join(' ', 0 .. 8192) . "\n"),
	qr/:1: 8193 CPUs; the simulator takes at most 8192\n/, 'cpus apic: 8193 IDs');
rejects(machine("cpus apic 0 4294967295\n"),
	qr/:1: bad APIC ID '4294967295' \(0 to 0xfffffffe; 0xffffffff is the x2APIC broadcast ID\)\n/,
	'APIC ID 0xffffffff is the broadcast ID');
rejects(machine("cpus apic 0 1 0x1\n"), qr/:1: APIC ID 1 listed twice\n/,
	'an APIC ID twice, once in hex');
rejects(machine("cpus apic 0 -1\n"), qr/:1: bad APIC ID '-1'/, 'negative APIC ID');
rejects(machine("cpus 2\ndevice a msix=2049\n"),
	qr/:2: bad value for 'msix': '2049' \(0 to 2048\)\n/, 'msix= past 2048');
rejects(machine("cpus 2\ndevice a msi=1 vectors=99999999999999999999999\n"),
	qr/:2: bad value for 'vectors'/, 'a number past 64 bits');
rejects(machine("cpus 2\ndevice a msi=1 vendor=0x\n"),
	qr/:2: bad value for 'vendor': '0x'/, '0x without digits');
rejects(machine("cpus 2\ndevice a msi=1 vendor=+5\n"),
	qr/:2: bad value for 'vendor': '\+5'/, 'a sign');

# What a message quotes from the file cannot drive the terminal.
rejects(machine("cpus 2\n\x1b[2Jbad\n"),
	qr/:2: unknown keyword '\\x1b\[2Jbad' \(cpus, sockets, platform, cmdline, device, unit\)\n/,
	'control bytes in a quoted word are shown as \\xNN');
rejects(machine("cpus 2\ndevice " . ('n' x 32) . " msi=1\n"),
	qr/:2: device name 'n{32}' is longer than 31 characters\n/, 'a device name too long to keep');
rejects(machine("cpus 2\ndevice caf\xc3\xa9 msi=1\n"),
	qr/:2: device name 'caf\\xc3\\xa9' holds a byte that is not printable ASCII\n/,
	'a device name that is not ASCII');
rejects(machine("cpus 2\ndevice a maskable=1 msi=1\n"),
	qr/:2: 'maskable' takes no value\n/, 'a flag with a value');
rejects(machine("cpus 2\ndevice a msi\n"),
	qr/:2: 'msi' needs a value \(msi=...\)\n/, 'a setting without its value');
rejects(machine("cpus 2\nplatform\n"), qr/:2: 'platform' needs a feature/,
	'platform without a feature');
rejects(machine("cpus 2\nplatform imsic num-ids=100\n"),
	qr/:2: num-ids=100: an IMSIC file has 64k-1 identities, 63 to 2047/,
	'an IMSIC num-ids not of the form 64k-1');
rejects(machine("cpus 2\nplatform imsic num-ids=2111\n"),
	qr/:2: num-ids=2111: an IMSIC file has/, 'an IMSIC num-ids above 2047');
rejects(machine("cpus 2\nplatform num-ids=127\nplatform num-ids=127\n"),
	qr/:3: 'num-ids' given twice \(lines 2 and 3\)\n/, 'num-ids twice');
rejects(machine("cpus 2\n\nplatform num-ids=127\n"),
	qr/:3: num-ids= is for 'platform imsic'\n/, 'num-ids without an IMSIC');
rejects(machine("cpus 2\nplatform remap\nplatform imsic\n"),
	qr/:3: platform imsic has RISC-V harts: x2apic, ext-dest-id, remap and isa-pic are x86 features\n/,
	'an IMSIC machine with x86 message formats');
rejects(machine("cpus 2\nplatform its\nplatform x2apic\n"),
	qr/:2: platform its has Arm CPUs: x2apic, ext-dest-id and remap are x86 features\n/,
	'an ITS machine with x86 message formats');
rejects(machine("cpus 2\nplatform imsic\n\nplatform its\n"),
	qr/:4: platform its and platform imsic: a machine has one interrupt controller\n/,
	'an ITS and an IMSIC in one machine');
rejects(machine("cpus 2\nplatform its num-ids=127\n"),
	qr/:2: num-ids= is for 'platform imsic'\n/, 'num-ids on an ITS machine');
rejects(machine("cpus 2\nplatform gic\n"),
	qr/:2: unknown platform feature 'gic' \(.*imsic, aplic, its, gicv2m, vtd, amd-vi, num-ids=N, ioapics=N\)\n/,
	'an unknown feature, the list naming its');
rejects(machine("cpus 2\nplatform its\nplatform vtd\n"),
	qr/:3: platform vtd is an x86 remapping unit: not with platform its, gicv2m or imsic\n/,
	'a VT-d unit on an ITS machine');
rejects(machine("cpus 2\nplatform vtd\nplatform amd-vi\n"),
	qr/:3: platform amd-vi is an x86 remapping unit: not with platform its, gicv2m, imsic or vtd\n/,
	'an AMD-Vi unit and a VT-d unit in one machine');
rejects(machine("cpus 2\nplatform amd-vi remap\n"),
	qr/:2: platform amd-vi and remap: the unit is uMSI's \(amd-vi\) or the host's \(remap\), not both\n/,
	'an AMD-Vi unit that the host also claims');
{
	# Several IO-APICs: INTx pins routed to the second one's GSIs are
	# handled under VT-d and AMD-Vi (each IO-APIC's own requester ID).
	for my $unit ('vtd', 'amd-vi') {
		my ($rc, $out) = run_umsi("sim", machine("cpus 2\nplatform $unit ioapics=2\n"
			. "device far intx=A gsi=40\ndevice near intx=B\n"));
		is($rc, 0, "platform $unit ioapics=2: both INTx devices run") or diag($out);
		like($out, qr/^machine: .*, 2 IO-APICs \(GSIs 0-47\), 2 devices/m,
		     "platform $unit ioapics=2: the machine line counts the IO-APICs");
		like($out, qr/far\s+1 \S+\s+intx\s+1\s+1/, "platform $unit ioapics=2: gsi=40 granted");
		like($out, qr/^interrupts: 2 fired, 2 handled, 0 on a CPU/m,
		     "platform $unit ioapics=2: both lines delivered");
	}
}
rejects(machine("cpus 2\ndevice a intx=A gsi=30\n"),
	qr/:2: gsi=30: the machine's IO-APICs have GSIs 0-23 \(platform ioapics=N: 24 inputs each\)\n/,
	'a GSI past the one IO-APIC');
rejects(machine("cpus 2\nplatform ioapics=2\ndevice a intx=A gsi=48\n"),
	qr/:3: gsi=48: the machine's IO-APICs have GSIs 0-47/, 'a GSI past two IO-APICs');
rejects(machine("cpus 2\ndevice a intx=A gsi=15\n"),
	qr/:2: gsi=15: GSIs 0-15 are ISA lines; a PCI pin arrives at 16 or above\n/, 'an ISA GSI');
rejects(machine("cpus 2\ndevice a msix=1 gsi=20\n"),
	qr/:2: gsi= routes the INTx pin: it needs intx=\n/, 'gsi= without a pin');
rejects(machine("cpus 2\ndevice a intx=A gsi=0x100000000\n"),
	qr/:2: bad value for 'gsi': '0x100000000' \(0 to 191\)\n/, 'a GSI past 32 bits');
rejects(machine("cpus 2\nplatform ioapics=0\n"), qr/:2: ioapics= takes 1 to 8\n/, 'no IO-APIC');
rejects(machine("cpus 2\nplatform ioapics=9\n"), qr/:2: ioapics= takes 1 to 8\n/, 'nine IO-APICs');
rejects(machine("cpus 2\nplatform ioapics=2\nplatform ioapics=3\n"),
	qr/:3: ioapics= given twice \(line 2 and here\)\n/, 'ioapics= twice');
rejects(machine("cpus 2\nplatform its ioapics=2\n"),
	qr/:2: platform ioapics= is for x86 machines: an Arm machine \(its\) routes INTx elsewhere\n/,
	'IO-APICs on an Arm machine');
rejects(machine("cpus 2\nplatform imsic\ndevice a intx=A gsi=20\n"),
	qr/:3: gsi= is an IO-APIC input: for x86 machines\n/, 'a GSI on a RISC-V machine');
{
	# platform aplic is the IMSIC machine: INTx through the APLIC.
	my ($rc, $out) = run_umsi("sim", machine("cpus 2\nplatform aplic\n"
		. "device old intx=A\n"));
	is($rc, 0, 'platform aplic: an INTx-only device runs') or diag($out);
	like($out, qr/old\s+1 \S+\s+intx\s+1\s+1/, 'platform aplic: its INTx line through the APLIC');
}
rejects(machine("cpus 9\nplatform gicv2m\n"),
	qr/:2: platform gicv2m: 9 CPUs, but a GICv2 distributor targets 8 CPU interfaces: at most 8 CPUs\n/,
	'a GICv2m machine of more than 8 CPUs');
rejects(machine("cpus 2\nplatform gicv2m its\n"),
	qr/:2: platform gicv2m with platform its: a machine has one interrupt controller\n/,
	'a GICv2m and an ITS in one machine');
rejects(machine("cpus 2\nplatform gicv2m x2apic\n"),
	qr/:2: platform gicv2m has Arm CPUs: x2apic, ext-dest-id, remap and isa-pic are x86 features\n/,
	'a GICv2m machine with x86 message formats');
{
	# The frame's 64 SPIs, shared by 4 CPUs: 40 + 24 granted, then the
	# advice says what more CPUs cannot bring.
	my ($rc, $out) = run_umsi("sim", machine("cpus 4\nplatform gicv2m\n"
		. "device nvme vendor=0x1b36 device=0x0010 msix=65 vectors=40 count=2\n"));
	is($rc, 1, 'umsi sim platform gicv2m runs, status 1: a device got fewer');
	like($out, qr/^machine: 4 Arm CPUs \(IDs 0-3\), a GICv2 with a v2m frame at 0x8020000 \(SPIs 80-143, shared by every CPU\), 2 devices asking for 80 vectors$/m,
	     'GICv2m: the machine line names the frame and its SPIs');
	like($out, qr/^interrupts: 64 fired, 64 handled, 0 on a CPU uMSI did not choose$/m,
	     'GICv2m: every granted vector fired on its CPU');
	like($out, qr/asked for 40, got 24 \(msix\).*\n.*a second v2m frame: this one's 64 SPIs are shared by every CPU/,
	     'GICv2m: the frame runs out, and the advice says why');
}
rejects(machine("cpus 2\nplatform remap vtd\n"),
	qr/:2: platform vtd and remap: the unit is uMSI's \(vtd\) or the host's \(remap\), not both\n/,
	'VT-d and the host remapping hook together');

# An ITS machine's CPUs share the LPIs 8192-65535 (the GICv3's 16 INTID
# bits), each CPU a run of its own, a multiple of 64 long: 256 a CPU up to
# 224 CPUs, fewer beyond, 896 CPUs at most. 8192 CPUs used to end in
# "the simulator cannot create the machine (out of memory?)" (its model
# keeps 2 MiB of counters a CPU) or, with the memory, in the back end's
# EINVAL; 225 to 896 CPUs in that EINVAL.
rejects(machine("cpus 8192\nplatform its\ndevice nic msix=64\n"),
	qr/:2: platform its: 8192 CPUs need at least 524288 LPIs \(uMSI's ITS back end gives every CPU its own, a multiple of 64\), but the GICv3's 16 INTID bits leave 57344 \(INTIDs 8192-65535\): at most 896 CPUs\n/,
	'platform its, 8192 CPUs: the limit hit and what fits, not "out of memory?"');
rejects(machine("platform its\n\ncpus 897\n"),
	qr/:3: platform its: 897 CPUs need at least 57408 LPIs .*: at most 896 CPUs\n/,
	'platform its, 897 CPUs: one too many, the later of the two lines named');
for my $c ([896, 64], [449, 64], [448, 128], [298, 192], [225, 192], [224, 256]) {
	my ($n, $per) = @$c;
	my $f = machine("cpus $n\nplatform its\ndevice nic msix=2048 count=4\ndevice x msi=32\n");
	($rc, $out, $err) = run_umsi('sim', '--json', $f);
	$j = eval { decode_json($out) };
	ok($rc == 0 && $j && @{$j->{cpus}} == $n && $j->{spread}{capacity} == $per &&
	   $j->{fired} == 8224 && $j->{handled} == 8224,
	   "platform its, $n CPUs: built with $per LPIs a CPU, all 8224 vectors fired and handled")
		or diag("status $rc: " . substr($err, 0, 300));
	($rc, $out, $err) = run_umsi('sim', $f);
	like($out, qr/^machine: $n Arm CPUs \(IDs 0-\d+\), a GICv3 ITS at 0x8080000 \(LPIs from 8192\), $per LPIs a CPU, /m,
	     "platform its, $n CPUs: the report says $per LPIs a CPU");
}

# The file as a whole.
rejects(machine(""), qr/: no 'cpus' line\n/, 'an empty file');
rejects(machine("# nothing\n\n"), qr/: no 'cpus' line\n/, 'only a comment');
rejects(machine("cpus 2\n" . ('#' x (16 << 20)) . "\n"),
	qr/: more than 16777216 bytes; a machine file is at most that\n/,
	'a file past 16 MiB');
($rc, $out, $err) = run_umsi('sim', $dir);
ok($rc == 2 && $err =~ /cannot read \Q$dir\E: Is a directory/, 'a directory')
	or diag("status $rc: $err");

# The shared INTx line: each handler answers for its own device only, so
# every interrupt is handled once (it used to count one per handler).
($rc, $out, $err) = run_umsi('sim', '--json', machine("cpus 2\ndevice a intx=A count=30\n"));
$j = eval { decode_json($out) };
ok($rc == 0 && $j && $j->{fired} == 30 && $j->{handled} == 30,
   '30 functions on shared INTx lines: 30 fired, 30 handled')
	or diag("status $rc, " . ($j ? "fired $j->{fired} handled $j->{handled}" : $err));

# SR-IOV (issue 29): vfs= and its settings, hostile and careless.
rejects(machine("cpus 2\ndevice n msix=4 vfs=256\n"),
	qr/:2: bad value for 'vfs': '256' \(0 to 255\)\n/, 'vfs=256: past function 255');
rejects(machine("cpus 2\ndevice n msix=4 vf-msix=4\n"),
	qr/:2: vf-msix=, vf-vectors= and vf-device= need vfs=\n/, 'vf-msix= without vfs=');
rejects(machine("cpus 2\ndevice n msix=4 vfs=2 vf-msix=4 vf-vectors=5\n"),
	qr/:2: vf-vectors= is larger than vf-msix=\n/, 'vf-vectors= above vf-msix=');
rejects(machine("cpus 2\ndevice n msix=4 vfs=2 vf-msix=2049\n"),
	qr/:2: bad value for 'vf-msix': '2049'/, 'vf-msix= past the PCI limit');
rejects(machine("cpus 2\ndevice " . ('n' x 29) . " msix=4 vfs=2\n"),
	qr/:2: device 'n+' with vfs=: the name is at most 28 characters/,
	'a name with no room for -vf');
rejects(machine("cpus 2\ndevice n msix=4 vfs=1 count=255\ndevice m msi=1\n"),
	qr/:3: the devices need buses past 255/,
	'255 PFs with VFs take buses 1-255: one more device has no bus');
rejects(machine("cpus 2\ndevice n msix=4 vfs=255 count=32\n"),
	qr/:2: 8192 device instances with the VFs; at most 8160\n/,
	'VFs count as instances: 32 x 255 + 32 is past 8160');
($rc, $out, $err) = run_umsi('sim', '--json',
	machine("cpus 4\ndevice a msi=1\ndevice n vendor=0x8086 device=0x1572 msix=8 vfs=3 vf-msix=2 vf-device=0x154c count=2\ndevice b msi=1\n"));
$j = eval { decode_json($out) };
ok($rc == 0 && $j && @{$j->{devices}} == 10 &&
   join(' ', map { $_->{bdf} } @{$j->{devices}}) eq
   '0000:01:00.0 0000:02:00.0 0000:03:00.0 0000:02:00.1 0000:02:00.2 0000:02:00.3 0000:03:00.1 0000:03:00.2 0000:03:00.3 0000:04:00.0' &&
   $j->{devices}[5]{pf} eq '0000:02:00.0' && $j->{devices}[5]{vf_index} == 2 &&
   $j->{devices}[8]{pf} eq '0000:03:00.0' && $j->{devices}[8]{granted} == 2 &&
   $j->{fired} == 2 + 16 + 12 && $j->{handled} == $j->{fired},
   'vfs=3 count=2: each PF alone on its bus, its VFs at functions 1-3, every vector handled')
	or diag("status $rc: " . ($j ? join(' ', map { $_->{bdf} } @{$j->{devices}}) : $err));
($rc, $out, $err) = run_umsi('sim',
	machine("cpus 4\ncmdline device_nomsi=0x154c8086\ndevice n vendor=0x8086 device=0x1572 msix=8 vfs=2 vf-device=0x154c\n"));
like($out, qr/^n-vf0-1 +2 .* none +8 +0 each$/m,
     'device_nomsi= with the VF Device ID: the VFs get nothing, the PF all');
like($out, qr/^sr-iov: n: 1 PF x 2 VFs: 2 enabled, 0 with all 8 vectors; /m,
     'the sr-iov line counts them');

# `unit` lines: remapping units of their own for named devices, each with
# its own table, on VT-d and on AMD-Vi; what each unit remapped is read
# from the unit.
for my $c (['vtd', 0xfed91000, 0xfed92000, 'faults'],
	   ['amd-vi', 0xfed84000, 0xfed88000, 'aborted']) {
	my ($plat, $u1, $u2, $bad) = @$c;
	($rc, $out) = run_umsi('sim', machine(sprintf("cpus 4\nplatform %s\n" .
		"device a msix=4 count=2\ndevice b msi=8 addr64\ndevice c msix=2 vfs=2 vf-msix=2\n" .
		"unit 0x%x a\nunit 0x%x c\n", $plat, $u1, $u2)));
	is($rc, 0, "$plat with two unit lines runs") or diag($out);
	like($out, qr/^machine: .*, 3 (VT-d remapping units|AMD-Vi IOMMUs) \(uMSI's tables\)/m,
	     "$plat: the machine line counts the units");
	like($out, qr/^remapping units: 0x[0-9a-f]+ 8 remapped, 0 $bad; 0x${\ sprintf('%x', $u1)} 8 remapped, 0 $bad; 0x${\ sprintf('%x', $u2)} 6 remapped, 0 $bad$/m,
	     "$plat: b's 8 messages through the first unit, a's 8 through the second, c's and its VFs' 6 through the third");
}
rejects(machine("cpus 2\ndevice a msi=1\nunit 0xfed91000 a\n"),
	qr/:3: 'unit' is a remapping unit of platform vtd or amd-vi \(x86\), and there is none\n/,
	'unit without a remapping platform');
rejects(machine("cpus 2\nplatform vtd\ndevice a msi=1\nunit 0xfed91000\n"),
	qr/:4: 'unit' takes an address and the devices it remaps/, 'unit without devices');
rejects(machine("cpus 2\nplatform vtd\ndevice a msi=1\nunit fed91000 a\n"),
	qr/:4: unit: bad address 'fed91000'\n/, 'unit address not a number');
rejects(machine("cpus 2\nplatform vtd\ndevice a msi=1\nunit 0xfed90000 a\n"),
	qr/:4: unit 0xfed90000: a VT-d unit's registers are 4 KiB aligned, from 0xfed91000 to 0xfed9f000 \(0xfed90000 is the first unit's\)\n/,
	"the first unit's address");
rejects(machine("cpus 2\nplatform amd-vi\ndevice a msi=1\nunit 0xfed85000 a\n"),
	qr/:4: unit 0xfed85000: a AMD-Vi unit's registers are 16 KiB aligned/, 'AMD-Vi unit misaligned');
rejects(machine("cpus 2\nplatform vtd\ndevice a msi=1\ndevice b msi=1\nunit 0xfed91000 a\nunit 0xfed91000 b\n"),
	qr/:6: unit 0xfed91000: line 5 has that address too\n/, 'two units at one address');
rejects(machine("cpus 2\nplatform vtd\nunit 0xfed91000 a\ndevice a msi=1\n"),
	qr/:3: unit: no device 'a' above this line\n/, 'a unit naming a device not yet given');
rejects(machine("cpus 2\nplatform vtd\ndevice a msi=1\nunit 0xfed91000 a\nunit 0xfed92000 a\n"),
	qr/:5: unit: device 'a' is already unit 1's \(line 4\)\n/, 'a device in two units');
rejects(machine("cpus 2\nplatform vtd\n" . join('', map { "device d$_ msi=1\n" } 0 .. 15) .
		join('', map { sprintf("unit 0x%x d$_\n", 0xfed91000 + 0x1000 * $_) } 0 .. 15)),
	qr/:34: more than 15 'unit' lines \(the simulator has 16 remapping units, the platform's first among them\)\n/,
	'a 16th unit line: more units than the simulator has');

done_testing();
