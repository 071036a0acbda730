#!/usr/bin/perl
# SPDX-License-Identifier: MIT
#
# Live migration under fire: e1000e's first MSI-X vector and edu's MSI
# vector (no mask bit: the hard case) each move to another CPU 2000
# times, each move right after the device was told to raise it,
# so messages are in flight or pending in an IRR while the IRQ moves. The
# host's run_on_cpu (cross-call IPI), vector_pending (IRR) and retrigger
# (fixed IPI) are what uMSI uses to lose and duplicate nothing: every
# event must still produce exactly one handler call. edu never repeats a
# message, so for it not even a stray call is allowed; e1000e repeats some
# (kernel/README.md), which its handler answers "not mine". Afterwards the
# hardware must show where each IRQ ended up.
#
# Then INTx: two edus on level-triggered IO-APIC lines (pci_nomsi), each
# moved 300 times under fire on 4 CPUs. A move that lands between a
# delivery and its EOI re-aims an entry whose Remote IRR is set; the EOI
# names the old vector, so the kernel's IO-APIC driver ends it through
# the EOI register when it re-aims such an entry (kernel/arch/x86_64/ioapic.c), or
# the line would never fire again (the run hung before); and uMSI does
# not resend a level input's copy left pending on the old CPU (the line
# is still asserted). Every event arrives; a line still asserted may call
# a handler that finds nothing ("not mine"), at most once a move.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use UmsiQemu;
use UmsiTest;

UmsiTest::require_library();

my $kvm = UmsiQemu::kvm_status();
for my $accel ('tcg', 'kvm') {
    SKIP: {
		if ($accel eq 'kvm' && $kvm ne 'yes') {
			UmsiQemu::skip_kvm(1);
			last SKIP;
		}
		subtest "$accel migration" => sub {
			my $r = UmsiTest::run_checked(accel => $accel,
				smp => '6,sockets=2,cores=3',
				devices => ['-device', 'e1000e,addr=2', '-device', 'edu,addr=3'],
				append => 'umsi.drivers=e1000e,edu umsi.migrate=2000 umsi.fire=20',
				name => "$accel migrate");
			my @m = grep { ($_->{event} // '') eq 'migrate' } @{$r->{umsi}};
			is(scalar @m, 2, 'two IRQs migrated');
			for my $m (@m) {
				my $t = "$m->{driver}:";
				is($m->{moved}, 2000, "$t 2000 moves done");
				is($m->{errors}, 0, "$t no move failed");
				is($m->{lost}, 0, "$t no event lost");
				is($m->{received}, $m->{sent}, "$t $m->{sent} events, as many handler calls");
				is($m->{not_mine}, 0, "$t no stray handler call")
					if $m->{driver} eq 'edu';
			}
			diag(join("\n", grep { /"event":"migrate"/ } @{$r->{lines}}))
				if grep { !$_->{ok} } @m;
			my @f = grep { ($_->{event} // '') eq 'fire' } @{$r->{umsi}};
			is(scalar(grep { $_->{ok} } @f), 6, 'all six vectors still fire exactly, on their CPUs')
				or diag(join("\n", grep { /"event":"(fire|migrate)"/ } @{$r->{lines}}));
		};
	}
}

subtest 'tcg INTx migration' => sub {
	my $r = UmsiTest::run_checked(smp => 4,
		devices => ['-device', 'edu,addr=5', '-device', 'edu,addr=6'],
		append => 'umsi.drivers=edu umsi.migrate=300 pci_nomsi',
		name => 'intx migrate');
	my @m = grep { ($_->{event} // '') eq 'migrate' } @{$r->{umsi}};
	is(scalar @m, 2, 'two INTx lines migrated');
	for my $m (@m) {
		my $t = "$m->{bdf}:";
		is($m->{moved}, 300, "$t 300 moves done");
		is($m->{errors}, 0, "$t no move failed");
		is($m->{lost}, 0, "$t no event lost");
		is($m->{received}, $m->{sent}, "$t $m->{sent} events, as many handled");
		cmp_ok($m->{not_mine}, '<=', 300, "$t at most one stray call a move ($m->{not_mine}): no EOI storm");
	}
};
done_testing();
