# SPDX-License-Identifier: MIT
#
# UmsiQemu - boot build/umsi-kernel in QEMU and collect what it says.
#
#   my $r = UmsiQemu::run(smp => '4', devices => [...], append => '...',
#                         accel => 'tcg', hold => 1, monitor => sub { ... });
#
# Every QEMU run is under timeout(1). The machine is q35 with no default
# NIC (-nic none; q35 would add an e1000e at 00:02.0), 256 MiB, COM1 to a
# file, the HMP monitor on a Unix socket and isa-debug-exit at 0xf4.
# The kernel also gets `umsi.hp_button_ms=0` (remove at once on the
# Attention Button, as a VM host wants) unless the caller's append names
# umsi.hp_button_ms or spec_button => 1 asks for the kernel's default.
# With hold => 1 the kernel gets `umsi.hold`; once its UMSI ready line is
# out, the monitor callback runs (it may use UmsiQemu::Monitor) and QEMU
# is told to quit.
#
# With qmp => 1 QEMU also gets a QMP socket; the monitor callback is then
# called as ($mon, $text, $ctx) with $ctx->{qmp} (UmsiQemu::QMP: commands
# and events such as DEVICE_DELETED) and $ctx->{serial} (UmsiQemu::Serial:
# wait for a line of the kernel's output), for tests that act on a
# running machine (hot plug). timeout bounds the whole run as usual.
#
# With step => sub { my ($mon, $text, $name) = @_; ... } the kernel gets
# `umsi.steps`: at every UMSI step line it waits for a key; the harness
# runs the callback (results in $r->{steps}, [name, result] pairs) and
# then presses a key through the monitor (sendkey ret).
#
# With arch => 'riscv64' the machine is QEMU virt with the AIA
# (virt,aia=aplic-imsic), OpenSBI (-bios default) and
# build/riscv64/umsi-kernel; the kernel ends the run through the
# sifive,test0 finisher with the same exit statuses.
#
# With arch => 'arm64' the machine is QEMU virt with GICv3 and an ITS
# (virt,gic-version=3,its=on, cortex-a57) and build/arm64/umsi-kernel;
# the kernel powers off through PSCI (QEMU exits 0) after its done line,
# whose "ok" is the verdict.
#
# The result: { rc, exit (kernel verdict: 'pass', 'fail', or a reason),
# serial (text), lines (array), umsi (decoded UMSI JSON objects), ready,
# accel, cmd }.
package UmsiQemu;

use strict;
use warnings;
use File::Temp qw(tempdir);
use IO::Socket::UNIX;
use JSON::PP;
use POSIX qw(:sys_wait_h);
use Time::HiRes qw(sleep time);
use Cwd qw(abs_path);
use Test::More ();
use File::Basename qw(dirname);

our $ROOT = abs_path(dirname(__FILE__) . '/../../..');
our $BUILD = $ENV{BUILD} // "$ROOT/build";
$BUILD = "$ROOT/$BUILD" unless $BUILD =~ m{^/};
our $KERNEL = $ENV{UMSI_KERNEL} // "$BUILD/umsi-kernel";
our $QEMU = $ENV{QEMU} // 'qemu-system-x86_64';
our $RV_KERNEL = $ENV{UMSI_RV_KERNEL} // "$BUILD/riscv64/umsi-kernel";
our $RV_QEMU = $ENV{RV_QEMU} // 'qemu-system-riscv64';
our $ARM64_KERNEL = $ENV{UMSI_ARM64_KERNEL} // "$BUILD/arm64/umsi-kernel";
our $ARM64_QEMU = $ENV{QEMU_AARCH64} // 'qemu-system-aarch64';

# QEMU's exit status for the kernel's isa-debug-exit values.
our $EXIT_PASS = (0x10 << 1) | 1;	# 33
our $EXIT_FAIL = (0x11 << 1) | 1;	# 35

sub have_qemu {
	my ($arch) = @_;
	my $q = ($arch // '') eq 'riscv64' ? $RV_QEMU :
		($arch // '') eq 'arm64' ? $ARM64_QEMU : $QEMU;
	return system("command -v $q >/dev/null 2>&1") == 0;
}

sub verdict {
	my ($rc) = @_;
	return 'pass' if $rc == $EXIT_PASS;
	return 'fail' if $rc == $EXIT_FAIL;
	return 'timeout' if $rc == 124 || $rc == 137;
	return 'reset or quit (triple fault?)' if $rc == 0;
	return "qemu error (exit $rc)";
}

sub qemu_cmd {
	my (%o) = @_;
	if (($o{arch} // '') eq 'riscv64') {
		return ($RV_QEMU, '-machine', $o{machine} // 'virt,aia=aplic-imsic',
			'-m', $o{mem} // '256M', '-smp', $o{smp} // '1',
			'-nic', 'none', '-display', 'none', '-no-reboot',
			'-bios', 'default', '-kernel', $o{kernel} // $RV_KERNEL,
			@{$o{devices} // []});
	}
	if (($o{arch} // '') eq 'arm64') {
		return ($ARM64_QEMU, '-machine', $o{machine} // 'virt,gic-version=3,its=on',
			'-cpu', $o{cpu} // 'cortex-a57',
			'-m', $o{mem} // '256M', '-smp', $o{smp} // '1',
			'-nic', 'none', '-display', 'none', '-no-reboot',
			'-kernel', $o{kernel} // $ARM64_KERNEL,
			@{$o{devices} // []});
	}
	my $accel = $o{accel} // 'tcg';
	my @cmd = ($QEMU, '-machine', $o{machine} // 'q35', '-accel', $accel,
		   '-m', $o{mem} // '256M', '-smp', $o{smp} // '1',
		   '-nic', 'none', '-display', 'none', '-no-reboot',
		   '-device', 'isa-debug-exit,iobase=0xf4,iosize=0x04',
		   '-kernel', $o{kernel} // $KERNEL);
	push @cmd, '-cpu', ($o{cpu} // 'host') if $accel eq 'kvm';
	push @cmd, '-cpu', $o{cpu} if $accel ne 'kvm' && $o{cpu};
	push @cmd, @{$o{devices} // []};
	return @cmd;
}

# On riscv64 the boot hart is whichever hart wins OpenSBI's lottery, and
# the boot CPU cannot go offline: a run whose umsi.offline= names the boot
# CPU is a different experiment, so it is booted again (up to 12 times)
# until the boot CPU is one the command line leaves alone.
sub run {
	my (%o) = @_;
	my ($list) = ($o{append} // '') =~ /(?:^|\s)umsi\.offline=(\S+)/;
	my %off = map { $_ => 1 } grep { /^\d+$/ } split(/,/, $list // '');
	my $r;

	for my $try (1 .. 12) {
		$r = run_once(%o);
		last if ($o{arch} // '') ne 'riscv64' || !%off || !$r->{ready};
		my $bh = $r->{ready}{boot_hart};
		last unless defined $bh;
		my ($bc) = map { $_->{cpu} } grep { $_->{hart} == $bh }
			   @{$r->{ready}{cpus} // []};
		last unless defined $bc && $off{$bc};
	}
	return $r;
}

sub run_once {
	my (%o) = @_;
	my $dir = tempdir('umsi-qemu-XXXXXX', TMPDIR => 1, CLEANUP => 1);
	my $serial = "$dir/serial.log";
	my $sock = "$dir/monitor.sock";
	my $qsock = "$dir/qmp.sock";
	my $timeout = $o{timeout} // 60;
	my $append = $o{append} // '';
	$append .= ' umsi.hold' if $o{hold};
	$append .= ' umsi.steps' if $o{step};
	# The harness removes at once, as a VM host does (QEMU's device_del
	# waits for the guest): a test of the Attention Button's 5-second
	# abort window names umsi.hp_button_ms itself.
	$append .= ' umsi.hp_button_ms=0'
		unless $o{spec_button} || $append =~ /\bumsi\.hp_button_ms=/;
	my @cmd = ('timeout', '-k', '5', $timeout, qemu_cmd(%o),
		   '-append', $append,
		   '-serial', "file:$serial",
		   '-monitor', "unix:$sock,server=on,wait=off",
		   ($o{qmp} ? ('-qmp', "unix:$qsock,server=on,wait=off") : ()));
	open(my $touch, '>', $serial) or die "$serial: $!";
	close($touch);

	my $pid = fork() // die "fork: $!";
	if (!$pid) {
		open(STDIN, '<', '/dev/null');
		open(STDOUT, '>', "$dir/qemu.out");
		open(STDERR, '>&', \*STDOUT);
		exec(@cmd) or exit(127);
	}
	my ($status, $text) = (undef, '');
	my $held = 0;
	my $mon_result;
	my ($mon, @steps);
	my $deadline = time() + $timeout + 10;
	while (time() < $deadline) {
		my $w = waitpid($pid, WNOHANG);
		if ($w == $pid) {
			$status = $?;
			last;
		}
		$text = slurp($serial);
		# Only whole lines count: the kernel may be mid-line.
		my @names = $text =~ /^UMSI \{"event":"step","step":"([^"]*)"\}\r?\n/mg;
		if ($o{step} && @names > @steps) {
			$mon //= UmsiQemu::Monitor->new($sock);
			last unless $mon;
			my $name = $names[scalar @steps];
			my $res = eval { $o{step}->($mon, $text, $name) };
			$res = { error => "step callback: $@" } if $@;
			push @steps, [$name, $res];
			$mon->cmd('sendkey ret');
			next;
		}
		if ($o{hold} && !$held && $text =~ /^UMSI \{"event":"ready".*\}\r?\n/m) {
			$held = 1;
			$mon //= UmsiQemu::Monitor->new($sock);
			if ($mon) {
				my $ctx = { serial => UmsiQemu::Serial->new($serial, $deadline) };
				$ctx->{qmp} = UmsiQemu::QMP->new($qsock) if $o{qmp};
				$mon_result = eval { $o{monitor}->($mon, $text, $ctx) }
					if $o{monitor};
				$mon_result = { error => "monitor callback: $@" }
					if $@;
				$mon->quit();
			} else {
				kill('TERM', $pid);
			}
		}
		sleep(0.05);
	}
	if (!defined $status) {
		kill('KILL', $pid);
		waitpid($pid, 0);
		$status = 124 << 8;
	}
	$text = slurp($serial);
	$text =~ s/\r//g;
	my $rc = $status >> 8;
	my @lines = split(/\n/, $text);
	my @umsi;
	for (@lines) {
		next unless /^UMSI (\{.*\})\s*$/;
		my $obj = eval { decode_json($1) };
		push @umsi, $obj // { event => 'unparsable', text => $1 };
	}
	my ($ready) = grep { ($_->{event} // '') eq 'ready' } @umsi;
	my $verdict = verdict($rc);
	# arm64: PSCI SYSTEM_OFF makes QEMU exit 0; the done line has the verdict.
	if (($o{arch} // '') eq 'arm64' && $rc == 0) {
		my ($done) = grep { ($_->{event} // '') eq 'done' } @umsi;
		$verdict = !$done ? 'powered off without a verdict' :
			$done->{ok} ? 'pass' : 'fail';
	}
	return {
		rc => $rc,
		exit => $o{hold} && $held ? 'held' : $verdict,
		serial => $text,
		lines => \@lines,
		umsi => \@umsi,
		ready => $ready,
		devices => devices(@umsi),
		monitor => $mon_result,
		steps => \@steps,
		qemu_out => slurp("$dir/qemu.out"),
		accel => $o{accel} // 'tcg',
		cmd => join(' ', @cmd),
	};
}

# The device objects of decoded UMSI lines: a device whose vectors did not
# fit one line continues in "device_more" lines until one without "more"
# (kernel/README.md, Output); they are joined here. A chain cut short (a
# device line with "more" and no closing line) is kept with incomplete
# set. A function reported several times (steps): its last device counts.
sub devices {
	my (%dev, @order, %open);
	for my $o (@_) {
		my $ev = $o->{event} // '';
		if ($ev eq 'device') {
			my %d = %$o;
			$d{vectors} = [@{$o->{vectors} // []}];
			push @order, $d{bdf} unless $dev{$d{bdf}};
			$dev{$d{bdf}} = \%d;
			if (delete $d{more}) {
				$d{incomplete} = 1;
				$open{$d{bdf}} = \%d;
			} else {
				delete $open{$d{bdf}};
			}
		} elsif ($ev eq 'device_more') {
			my $d = $open{$o->{bdf} // ''};
			next unless $d;		# a continuation of nothing
			push @{$d->{vectors}}, @{$o->{vectors} // []};
			next if $o->{more};
			delete $d->{incomplete};
			delete $open{$o->{bdf}};
		}
	}
	return [map { $dev{$_} } @order];
}

# QEMU arguments that trace MSI-X programming into $file: the MSI-X
# Message Control writes and every MMIO access (the MSI-X table's
# accesses carry the region name 'msix-table').
sub msix_trace_args {
	my ($file) = @_;
	return ('-trace', 'msix_write_config', '-trace', 'memory_region_ops_write',
		'-trace', 'memory_region_ops_read', '-D', $file);
}

# Count the guest's MSI-X table accesses of device $dev (QEMU's device
# name, e.g. 'nvme') in a trace made with msix_trace_args. MSI-X set-up
# starts with the write that sets MSI-X Enable and Function Mask together
# ("enabled 1 masked 1"); what the guest did to the table before (the
# kernel's cold-boot judgement) is counted apart. Accesses by no CPU
# (cpu -1: the monitor's xp) are not the guest's and not counted. With
# one MSI-X device in the machine, the table region is its.
# Returns { before => N, writes => N, reads => N, enables => N }.
sub msix_trace_count {
	my ($file, $dev) = @_;
	my %c = (before => 0, writes => 0, reads => 0, enables => 0);
	open(my $fh, '<', $file) or return \%c;
	my $on = 0;
	while (my $l = <$fh>) {
		if ($l =~ /msix_write_config dev (\S+) enabled 1 masked 1/ && $1 eq $dev) {
			$on = 1;
			$c{enables}++;
			next;
		}
		next unless $l =~ /memory_region_ops_(read|write) cpu (-?\d+) .*name 'msix-table'/;
		next if $2 < 0;
		if (!$on) {
			$c{before}++;
		} else {
			$c{$1 eq 'read' ? 'reads' : 'writes'}++;
		}
	}
	close($fh);
	return \%c;
}

sub slurp {
	my ($f) = @_;
	open(my $fh, '<', $f) or return '';
	local $/;
	my $t = <$fh>;
	close($fh);
	return $t // '';
}

# Is KVM usable? A short probe boot under KVM, cached in build/kvm-usable
# ("yes" or "no: reason"). Nested KVM has hung guests on this machine, so
# the probe itself runs under a short timeout.
sub kvm_status {
	return 'no: UMSI_NO_KVM set' if $ENV{UMSI_NO_KVM};
	my $cache = "$BUILD/kvm-usable";
	if (-f $cache && -M $cache < -M $KERNEL) {
		my $c = slurp($cache);
		chomp($c);
		return $c if $c ne '';
	}
	my $ans;
	if (!-r '/dev/kvm' || !-w '/dev/kvm') {
		$ans = 'no: /dev/kvm not accessible';
	} else {
		my $r = run(accel => 'kvm', smp => '2', timeout => 20);
		if ($r->{exit} eq 'pass' && $r->{ready}) {
			$ans = 'yes';
		} else {
			my $why = $r->{exit};
			my ($err) = $r->{qemu_out} =~ /(\S[^\n]*)/;
			$why .= ": $err" if $err;
			$ans = "no: probe boot under KVM: $why";
		}
	}
	if (open(my $fh, '>', $cache)) {
		print $fh "$ans\n";
		close($fh);
	}
	return $ans;
}

sub kvm_usable { return kvm_status() eq 'yes'; }

# The accelerators a test should run under: TCG always, KVM when usable.
sub accels {
	return ('tcg', kvm_usable() ? ('kvm') : ());
}

# Inside a SKIP: block: emit $n "ok N # SKIP kvm not usable: <reason>"
# lines (Test::More's skip() spells the directive in lower case), then
# leave the block with `last SKIP`.
sub skip_kvm {
	my ($n) = @_;
	my $why = 'kvm not usable: ' . (kvm_status() =~ s/^no: //r);
	my $tb = Test::More->builder;
	for (1 .. ($n // 1)) {
		my $num = $tb->current_test + 1;
		$tb->current_test($num);
		my $fh = $tb->output;
		print $fh "ok $num # SKIP $why\n";
	}
}

package UmsiQemu::Monitor;

# A minimal HMP client over the Unix socket.

use strict;
use warnings;
use IO::Socket::UNIX;
use Time::HiRes qw(sleep time);

sub new {
	my ($class, $path) = @_;
	my $s;
	for (1 .. 100) {
		$s = IO::Socket::UNIX->new(Type => SOCK_STREAM(), Peer => $path);
		last if $s;
		sleep(0.05);
	}
	return undef unless $s;
	my $self = bless { s => $s }, $class;
	$self->_read_prompt();
	return $self;
}

sub _read_prompt {
	my ($self) = @_;
	my $buf = '';
	my $deadline = time() + 30;
	my $s = $self->{s};
	while (time() < $deadline) {
		my $rin = '';
		vec($rin, fileno($s), 1) = 1;
		next unless select(my $rout = $rin, undef, undef, 0.5);
		my $n = sysread($s, my $chunk, 65536);
		last unless $n;
		$buf .= $chunk;
		last if $buf =~ /\(qemu\) $/;
	}
	return $buf;
}

# Run one HMP command and return its output, without the echo and prompt.
sub cmd {
	my ($self, $line) = @_;
	syswrite($self->{s}, "$line\n");
	my $out = $self->_read_prompt();
	$out =~ s/\e\[[0-9;]*[A-Za-z]//g;	# readline's cursor movement
	$out =~ s/\r//g;
	$out =~ s/\(qemu\) $//;
	my @l = split(/\n/, $out, -1);
	shift @l if @l && $l[0] =~ /\Q$line\E\s*$/;	# the echo
	return join("\n", @l);
}

# Read $n 32-bit words of guest physical memory: xp /Nwx.
sub read32 {
	my ($self, $addr, $n) = @_;
	my @w;
	while ($n > 0) {
		my $chunk = $n > 256 ? 256 : $n;
		my $out = $self->cmd(sprintf('xp /%dwx 0x%x', $chunk, $addr));
		for my $l (split(/\n/, $out)) {
			next unless $l =~ /^[0-9a-f]+:\s*(.*)$/;
			push @w, map { hex($_) } ($1 =~ /0x([0-9a-f]+)/g);
		}
		$addr += 4 * $chunk;
		$n -= $chunk;
	}
	return @w;
}

# Ask QEMU to exit and wait (bounded) until it has closed the socket:
# closing our end at once can drop the command unread.
sub quit {
	my ($self) = @_;
	my $s = $self->{s};
	syswrite($s, "quit\n");
	my $deadline = time() + 10;
	while (time() < $deadline) {
		my $rin = '';
		vec($rin, fileno($s), 1) = 1;
		next unless select(my $rout = $rin, undef, undef, 0.5);
		last unless sysread($s, my $chunk, 65536);
	}
	close($s);
}

package UmsiQemu::Serial;

# The kernel's COM1 output as it grows: wait for a line, read what came.

use strict;
use warnings;
use Time::HiRes qw(sleep time);

sub new {
	my ($class, $path, $deadline) = @_;
	return bless { path => $path, deadline => $deadline, pos => 0 }, $class;
}

sub text {
	my ($self) = @_;
	my $t = UmsiQemu::slurp($self->{path});
	$t =~ s/\r//g;
	return $t;
}

# Mark the current end: later waits look only at what comes after.
sub mark {
	my ($self) = @_;
	$self->{pos} = length($self->text());
	return $self->{pos};
}

# Text written since the mark.
sub since_mark {
	my ($self) = @_;
	return substr($self->text(), $self->{pos});
}

# Wait (at most $timeout seconds, and never past the run's deadline) until
# a whole line after the mark matches $re. Returns the line, or undef.
sub wait_line {
	my ($self, $re, $timeout) = @_;
	my $end = time() + ($timeout // 30);
	$end = $self->{deadline} if $end > $self->{deadline};
	while (1) {
		my $t = substr($self->text(), $self->{pos});
		$t =~ s/[^\n]*\z//;	# a line still being written
		for my $l (split(/\n/, $t)) {
			return $l if $l =~ $re;
		}
		return undef if time() >= $end;
		sleep(0.02);
	}
}

package UmsiQemu::QMP;

# A minimal QMP client: capabilities negotiation, commands, events.

use strict;
use warnings;
use IO::Socket::UNIX;
use JSON::PP;
use Time::HiRes qw(sleep time);

sub new {
	my ($class, $path) = @_;
	my $s;
	for (1 .. 100) {
		$s = IO::Socket::UNIX->new(Type => SOCK_STREAM(), Peer => $path);
		last if $s;
		sleep(0.05);
	}
	return undef unless $s;
	my $self = bless { s => $s, buf => '', events => [] }, $class;
	$self->_next(10);			# the greeting
	$self->cmd('qmp_capabilities');
	return $self;
}

# The next JSON object from QEMU, or undef after $timeout seconds.
sub _next {
	my ($self, $timeout) = @_;
	my $end = time() + $timeout;
	while (1) {
		if ($self->{buf} =~ s/^\s*([^\r\n]+)\r?\n//) {
			my $o = eval { decode_json($1) };
			return $o if $o;
			next;
		}
		my $left = $end - time();
		return undef if $left <= 0;
		my $rin = '';
		vec($rin, fileno($self->{s}), 1) = 1;
		next unless select(my $rout = $rin, undef, undef, $left > 0.5 ? 0.5 : $left);
		my $n = sysread($self->{s}, my $chunk, 65536);
		return undef unless $n;
		$self->{buf} .= $chunk;
	}
}

# Run a command; returns its "return" value, or dies with QEMU's error.
# Events that arrive meanwhile are kept for wait_event().
sub cmd {
	my ($self, $name, %args) = @_;
	my $req = { execute => $name };
	$req->{arguments} = \%args if %args;
	syswrite($self->{s}, encode_json($req) . "\n");
	while (defined(my $o = $self->_next(30))) {
		if ($o->{event}) {
			push @{$self->{events}}, { %$o, seen => time() };
			next;
		}
		die "$name: $o->{error}{desc}\n" if $o->{error};
		return $o->{return} if exists $o->{return};
	}
	die "$name: no answer from QEMU\n";
}

# Wait for event $name whose data satisfies $match (a sub, optional).
# Returns the event (with 'seen', the time it was read) or undef.
sub wait_event {
	my ($self, $name, $timeout, $match) = @_;
	my $end = time() + ($timeout // 30);
	while (1) {
		for my $i (0 .. $#{$self->{events}}) {
			my $e = $self->{events}[$i];
			next unless $e->{event} eq $name && (!$match || $match->($e->{data} // {}));
			splice(@{$self->{events}}, $i, 1);
			return $e;
		}
		my $left = $end - time();
		return undef if $left <= 0;
		my $o = $self->_next($left);
		push @{$self->{events}}, { %$o, seen => time() } if $o && $o->{event};
	}
}

1;
