#!/usr/bin/perl
# SPDX-License-Identifier: MIT
#
# The seed's dynamic MSI-X API on hardware: e1000e starts with two of its
# five MSI-X vectors, umsi_msix_alloc_vectors() adds the other three while
# it runs, umsi_msix_free_vectors() takes them back. The kernel stops at
# each step; the monitor reads the MSI-X table there (two entries live and
# three masked, then five live, then two again), and interrupts arrive
# exactly on every live vector at every step.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use UmsiQemu;
use UmsiTest;

UmsiTest::require_library();

my $kvm = UmsiQemu::kvm_status();
my %live = (start => 2, grown => 5, shrunk => 2);
for my $accel ('tcg', 'kvm') {
    SKIP: {
		if ($accel eq 'kvm' && $kvm ne 'yes') {
			UmsiQemu::skip_kvm(1);
			last SKIP;
		}
		subtest "$accel dynamic MSI-X" => sub {
			my $r = UmsiTest::run_checked(accel => $accel,
				smp => '6,sockets=2,cores=3',
				devices => ['-device', 'e1000e,addr=2'],
				append => 'umsi.drivers=e1000e e1000e.mode=dynamic umsi.dynamic=3 umsi.fire=20',
				step => \&UmsiTest::step_check, name => "$accel dynamic");
			is_deeply([map { $_->[0] } @{$r->{steps}}], [qw(start grown shrunk)],
				  'three steps inspected');
			for my $s (@{$r->{steps}}) {
				my ($name, $res) = @$s;
				my ($d) = grep { $_->{bdf} eq '0000:00:02.0' } @{$res->{devices} // []};
				is(scalar @{$d->{vectors} // []}, $live{$name},
				   "$name: $live{$name} vectors listed");
				for my $c (@{$res->{results} // []}) {
					ok($c->[0], "$name: $c->[1]") or diag($c->[2]);
				}
			}
			my @f = grep { ($_->{event} // '') eq 'fire' } @{$r->{umsi}};
			is(scalar(grep { !$_->{ok} } @f), 0, 'every fire exact, on its CPU');
			is(scalar @f, 2 + 5 + 2 + 2, 'fired at each step (and at the end)');
		};
	}
}
done_testing();
