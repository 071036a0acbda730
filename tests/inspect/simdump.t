#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
#
# Machines no real dump holds, built on the simulator and brought up
# through the unmodified library by tests/inspect/simdump.c: a 2048-entry
# MSI-X table in a 64-bit BAR above 4 GiB, sparse MSI-X entries with table
# and PBA in two 64-bit BARs (read through a sparse /dev/mem), a
# 32-message MSI block with sparse masks, remapped messages to x2APIC IDs,
# extended destination IDs, a domain other than 0. For each:
#   - lspci, the oracle, reads from the generated dump what the simulator
#     holds: table size and location, BAR addresses, MSI registers
#     (lspci-oracle.t compares umsi inspect with lspci on the same dumps,
#     as committed in tests/data/sim-dumps);
#   - umsi inspect --sysroot on the generated sysfs/procfs tree shows every
#     MSI-X entry as the simulator holds it, each joined to the IRQ the
#     library gave it, with its per-CPU counts, affinity, APIC ID, vector
#     or remapping handle;
#   - umsi inspect --check finds nothing on a machine the library set up,
#     and after each fault planted through the library or the hardware
#     (an entry left unmasked, an affinity elsewhere, an interrupt pending
#     behind the library's mask, one message in two functions, Function
#     Mask, Bus Master off, MME above MMC) exactly the findings the
#     simulator's state implies.
use strict;
use warnings;
no warnings 'portable';         # 64-bit addresses through hex()
use JSON::PP;
use Test::More;
use File::Path qw(remove_tree);
use FindBin;
require "$FindBin::Bin/lib.pl";

our ($UMSI, $ROOT);
my $B = "$ROOT/" . ($ENV{BUILD} // 'build');
my $gen = "$B/inspect/simdump";
plan skip_all => "$UMSI is not built" unless -x $UMSI;
plan skip_all => "$gen is not built (make $gen)" unless -x $gen;
my $have_lspci = system('sh', '-c', 'command -v lspci >/dev/null') == 0;

my $work = "$B/inspect/simdump-test";
remove_tree($work);

sub generate {
	my ($dir, @args) = @_;
	my ($rc, undef, $err) = run_cmd($gen, $dir, @args);
	return $rc == 0 ? 1 : do { diag($err); 0 };
}

# The simulator's truth (see simdump.c).
sub truth {
	my ($file) = @_;
	my %t = (cpu => {}, irq => {}, entry => {}, bar => {}, fn => {}, msi => {}, irte => {},
		 findings => []);
	open(my $fh, '<', $file) or die "$file: $!";
	while (<$fh>) {
		chomp;
		my @w = split / /;
		if ($w[0] eq 'cpu') { $t{cpu}{$w[1]} = $w[2] }
		elsif ($w[0] eq 'fn') { $t{fn}{$w[1]} = { mode => $w[3], nvec => $w[5] } }
		elsif ($w[0] eq 'bar') { $t{bar}{"$w[1] $w[2]"} = hex($w[3]) }
		elsif ($w[0] eq 'entry') {
			$t{entry}{$w[1]}[$w[2]] = { address => hex($w[3]), data => hex($w[4]),
						    ctrl => hex($w[5]), pending => $w[6] };
		} elsif ($w[0] eq 'irq') {
			$t{irq}{$w[1]} = { bdf => $w[2], kind => $w[3], hwirq => $w[4], cpu => $w[5],
					   apic => $w[6], vector => $w[7], counts => [split /,/, $w[8]] };
		} elsif ($w[0] eq 'msi') {
			$t{msi}{$w[1]} = { address => hex($w[2]), data => hex($w[3]),
					   mask => hex($w[4]), pending => hex($w[5]) };
		} elsif ($w[0] eq 'irte') {
			# irte BDF msix|msi INDEX HANDLE IRQ APIC VECTOR
			$t{irte}{"$w[1] $w[2] $w[3]"} = { handle => $w[4], irq => $w[5] };
		} elsif ($w[0] eq 'finding') {
			push @{$t{findings}}, join(' ', @w[1 .. $#w]);
		}
	}
	close($fh);
	$t{findings} = [sort @{$t{findings}}];
	return \%t;
}

sub text_findings {
	my ($out) = @_;
	return [sort map { /^(\S+)(?: \(line \d+\))? (MSI(?:-X)?(?: (?:entry|message) \d+)?) (\[[a-z-]+\]): / ?
			   "$1 $2 $3" : () } split /\n/, $out];
}

ok(generate($work), 'simdump writes the machines') or BAIL_OUT('no machines');
my @machines = qw(large remap extdest faults);

for my $m (@machines) {
	my $name = "sim-$m";
	my $dump = "$work/dumps/$name";
	my $t = truth("$work/expect/$name");

	# The committed copy is what the generator writes from today's library.
	my $committed = "$ROOT/tests/data/sim-dumps/$name";
	if (-f $committed && system('cmp', '-s', $dump, $committed) != 0) {
		diag("$name: tests/data/sim-dumps/$name differs from what simdump writes now " .
		     "(the library programs devices differently); `make sim-dumps` regenerates it");
	}

	# ---- lspci reads the simulator's state from the dump ---------------
	SKIP: {
		skip 'lspci is not installed (Debian: pciutils)', 1 unless $have_lspci;
		my (%seen, @bad, $bdf);
		for (split /\n/, `lspci -F '$dump' -vvv 2>/dev/null`) {
			if (/^(?:([0-9a-f]{4,6}):)?([0-9a-f]{2}:[0-9a-f]{2}\.[0-7]) /) {
				$bdf = sprintf('%04x', hex($1 // '0')) . ":$2";
				$seen{$bdf}++;
			} elsif (/^\tRegion (\d): Memory at ([0-9a-f]+) \(64-bit/) {
				my $want = $t->{bar}{"$bdf $1"};
				push @bad, "$bdf BAR $1: lspci $2, sim " . sprintf('%x', $want // 0)
					if !defined $want || hex($2) != $want;
				$seen{"$bdf bar$1"}++;
			} elsif (/^\tCapabilities: \[[0-9a-f]+\] MSI-X: Enable\+ Count=(\d+)/) {
				my $n = scalar @{$t->{entry}{$bdf} // []};
				push @bad, "$bdf MSI-X Count=$1, sim $n entries" if $1 != $n;
			} elsif (/^\t\tAddress: ([0-9a-f]+)  Data: ([0-9a-f]+)/ && $t->{msi}{$bdf}) {
				my $w = $t->{msi}{$bdf};
				push @bad, "$bdf MSI Address/Data: lspci $1/$2"
					if hex($1) != $w->{address} || hex($2) != $w->{data};
			} elsif (/^\t\tMasking: ([0-9a-f]+)  Pending: ([0-9a-f]+)/ && $t->{msi}{$bdf}) {
				my $w = $t->{msi}{$bdf};
				push @bad, "$bdf MSI Masking/Pending: lspci $1/$2"
					if hex($1) != $w->{mask} || hex($2) != $w->{pending};
			}
		}
		my @fns = sort keys %{$t->{fn}};
		push @bad, map { "$_: not listed by lspci" } grep { !$seen{$_} } @fns;
		my @bars = grep { my ($b, $i) = split / /; !$seen{"$b bar$i"} } grep { $t->{bar}{$_} >= 2**32 } keys %{$t->{bar}};
		push @bad, map { "$_: BAR above 4 GiB not shown by lspci" } @bars;
		ok(!@bad, "$name: lspci reads from the dump what the simulator holds (" . scalar(@fns) .
		   ' functions, MSI-X sizes, BAR addresses, MSI registers)') or diag(join("\n", @bad));
	}

	# ---- umsi inspect on the sysfs tree ---------------------------------
	my ($rc, $out, $err) = run_cmd($UMSI, 'inspect', '--sysroot', "$work/sysroot/$name", '--json');
	is($rc, 0, "$name: umsi inspect --sysroot exit 0") or diag($err);
	my $doc = eval { decode_json($out) } or do { fail("$name: JSON: $@"); next };
	my %dev = map { $_->{bdf} => $_ } @{$doc->{devices}};
	my ($entries, $joined, @bad) = (0, 0);
	for my $bdf (sort keys %{$t->{entry}}) {
		my $want = $t->{entry}{$bdf};
		my $got = $dev{$bdf}{msix}{entries};
		if (ref $got ne 'ARRAY' || @$got != @$want) {
			push @bad, "$bdf: table not read: " . ($dev{$bdf}{msix}{entries_reason} // '?');
			next;
		}
		for my $i (0 .. $#$want) {
			my ($w, $g) = ($want->[$i], $got->[$i]);
			$entries++;
			push @bad, "$bdf entry $i: $g->{address}/$g->{data}, sim " .
				sprintf('0x%x/0x%x', $w->{address}, $w->{data})
				if hex($g->{address}) != $w->{address} || hex($g->{data}) != $w->{data};
			push @bad, "$bdf entry $i: masked/pending differ"
				if !!$g->{masked} != !!($w->{ctrl} & 1) || !!$g->{pending} != !!$w->{pending};
		}
	}
	for my $irq (sort { $a <=> $b } keys %{$t->{irq}}) {
		my $w = $t->{irq}{$irq};
		my $d = $dev{$w->{bdf}};
		if ($w->{kind} eq 'msix') {
			my $g = $d->{msix}{entries} ? $d->{msix}{entries}[$w->{hwirq}] : undef;
			next unless $g;
			push @bad, "IRQ $irq: entry $w->{hwirq} shows IRQ " . ($g->{irq} // 'none')
				if ($g->{irq} // -1) != $irq;
			push @bad, "IRQ $irq: counts [@{$g->{counts} // []}], sim [@{$w->{counts}}]"
				if "@{$g->{counts} // []}" ne "@{$w->{counts}}";
			push @bad, "IRQ $irq: affinity " . ($g->{effective_affinity} // 'none') . ", sim $w->{cpu}"
				if ($g->{effective_affinity} // '') ne $w->{cpu};
			my $r = $t->{irte}{"$w->{bdf} msix $w->{hwirq}"};
			if ($r) {
				push @bad, "IRQ $irq: IR handle " . ($g->{ir_handle} // 'none') . ", sim $r->{handle} for IRQ $r->{irq}"
					if !$g->{remapped} || $g->{ir_handle} != $r->{handle} || $r->{irq} != $irq;
			} else {
				push @bad, "IRQ $irq: APIC ID/vector $g->{dest_id}/$g->{vector}, sim $w->{apic}/$w->{vector}"
					if ($g->{dest_id} // -1) != $w->{apic} || ($g->{vector} // -1) != $w->{vector};
			}
			$joined++;
		} else {
			my ($q) = grep { $_->{irq} == $irq } @{$d->{msi}{irqs} // []};
			push @bad, "IRQ $irq: not among $w->{bdf}'s MSI IRQs" unless $q;
			next unless $q;
			push @bad, "IRQ $irq: MSI message $q->{index}, sim $w->{hwirq}" if ($q->{index} // -1) != $w->{hwirq};
			push @bad, "IRQ $irq: counts differ" if "@{$q->{counts} // []}" ne "@{$w->{counts}}";
			# The message as the function's registers hold it (a
			# planted fault may have changed it behind the library).
			my $msg = $d->{msi}{message};
			my $hw = $t->{msi}{$w->{bdf}};
			my $hdest = (($hw->{address} >> 12) & 0xff) | ((($hw->{address} >> 5) & 0x7f) << 8);
			if ($hw->{address} & 0x10) {
				my $r = $t->{irte}{"$w->{bdf} msi 0"};
				push @bad, "IRQ $irq: MSI IR handle " . ($msg->{ir_handle} // 'none')
					if !$msg->{remapped} || !$r || $msg->{ir_handle} != $r->{handle};
			} else {
				push @bad, "IRQ $irq: MSI to APIC ID $msg->{dest_id}, registers say $hdest"
					if ($msg->{dest_id} // -1) != $hdest;
				push @bad, "IRQ $irq: MSI vector $msg->{vector}, registers say " . ($hw->{data} & 0xff)
					if ($msg->{vector} // -1) != ($hw->{data} & 0xff);
				# Where the library left the message alone, it is
				# the IRQ's: its APIC ID, and its vector once the
				# device ORs in the message number.
				push @bad, "IRQ $irq: MSI block at APIC $hdest vector " . ($hw->{data} & 0xff) .
					"+$w->{hwirq}, the library's IRQ at $w->{apic}/$w->{vector}"
					if $m ne 'faults' && ($hdest != $w->{apic} ||
							      ($hw->{data} & 0xff) + $w->{hwirq} != $w->{vector});
			}
			$joined++;
		}
	}
	ok(!@bad, "$name: every MSI-X entry as the simulator holds it ($entries), every IRQ joined " .
	   "with counts, affinity, destination ($joined)") or diag(join("\n", @bad[0 .. ($#bad < 20 ? $#bad : 19)]));

	# ---- --check: what the truth implies --------------------------------
	($rc, $out, $err) = run_cmd($UMSI, 'inspect', '--check', '--sysroot', "$work/sysroot/$name");
	is_deeply(text_findings($out), $t->{findings},
		  "$name: --check on the sysfs tree finds " .
		  (@{$t->{findings}} ? scalar(@{$t->{findings}}) . ' findings, as the simulator\'s state implies' :
		   'nothing on a machine the library set up')) or diag($out);
	is($rc, @{$t->{findings}} ? 1 : 0, "$name: --check exit status");
}

# ---- each fault, planted in the large machine --------------------------------
my %fault = (
	unowned => 'unowned-entry', affinity => 'outside-affinity', pending => 'pending-masked',
	same => 'same-message', fmask => 'function-masked', bme => 'bus-master-off',
	mme => 'mme-over-capable',
);
for my $f (sort keys %fault) {
	my $dir = "$work/fault-$f";
	ok(generate($dir, '--machine', 'large', '--fault', $f), "fault $f: planted") or next;
	my $t = truth("$dir/expect/sim-large");
	my ($rc, $out, $err) = run_cmd($UMSI, 'inspect', '--check', '--sysroot', "$dir/sysroot/sim-large");
	my $got = text_findings($out);
	ok((grep { /\[$fault{$f}\]/ } @$got), "fault $f: --check reports $fault{$f}") or diag($out, $err);
	is_deeply($got, $t->{findings}, "fault $f: exactly the findings the simulator's state implies (" .
		  scalar(@{$t->{findings}}) . ')') or diag($out);
	is($rc, 1, "fault $f: exit 1");
	my (undef, $json) = run_cmd($UMSI, 'inspect', '--check', '--json', '--sysroot', "$dir/sysroot/sim-large");
	my $doc = eval { decode_json($json) };
	is(scalar @{$doc->{findings} // []}, scalar @$got, "fault $f: --json carries them");
	remove_tree($dir);
}
remove_tree($work) unless $ENV{KEEP};
done_testing();
