# SPDX-License-Identifier: MIT
#
# UmsiTest - shared steps of the QEMU tests that exercise the library
# through the kernel: run a held machine, check it against the monitor,
# and look devices up in the UMSI lines.
package UmsiTest;

use strict;
use warnings;
use Test::More;
use UmsiQemu;
use UmsiCheck;
use JSON::PP ();

# Skip the whole file unless QEMU, the kernel and the library API are there.
sub require_library {
	plan skip_all => 'qemu-system-x86_64 not installed' unless UmsiQemu::have_qemu();
	plan skip_all => "$UmsiQemu::KERNEL not built (make kernel)"
		unless -f $UmsiQemu::KERNEL;
	my $r = UmsiQemu::run(smp => 1);
	plan skip_all => 'kernel linked without the uMSI library (its API is not in build/libumsi.a yet)'
		if $r->{serial} =~ /^umsi: library not linked/m;
}

# Boot held, check every UMSI line against the hardware, and return the
# run. Each check is one TAP test.
sub run_checked {
	my (%o) = @_;
	my $r = UmsiQemu::run(%o, hold => 1,
			      monitor => sub { UmsiCheck::snapshot(@_) });
	my $tag = $o{name} // ($o{append} // '');
	is($r->{exit}, 'held', "$tag: set-up completed and held") or diag($r->{serial});
	ok(!grep({ /EXCEPTION|PANIC|^check: / } @{$r->{lines}}), "$tag: no crash, no kernel check failure")
		or diag(join("\n", grep { /EXCEPTION|PANIC|^check: / } @{$r->{lines}}));
	for my $res (UmsiCheck::check($r->{monitor}, $r)) {
		ok($res->[0], "$tag: $res->[1]") or diag($res->[2]);
	}
	return $r;
}

# The latest UMSI device of each function in the serial text so far
# (continuation lines joined).
sub latest_devices {
	my ($text) = @_;
	my @objs;
	for (split(/\n/, $text)) {
		next unless /^UMSI (\{"event":"device(?:_more)?".*\})\s*$/;
		my $o = eval { JSON::PP::decode_json($1) } or next;
		push @objs, $o;
	}
	return UmsiQemu::devices(@objs);
}

# A step callback: snapshot the hardware and check the latest lines.
sub step_check {
	my ($mon, $text, $name) = @_;
	my $hw = UmsiCheck::snapshot($mon, $text);
	my $devs = latest_devices($text);
	return { devices => $devs,
		 results => [UmsiCheck::check($hw, { devices => $devs, lines => [] })] };
}

sub device {
	my ($r, $bdf) = @_;
	return (grep { $_->{bdf} eq $bdf } @{$r->{devices}})[0] // {};
}

sub devices_by_id {
	my ($r, $vendor, $device) = @_;
	return grep { $_->{vendor} eq $vendor && $_->{device} eq $device } @{$r->{devices}};
}

# The GSI the kernel printed for a function in its "pci" lines.
sub kernel_gsi {
	my ($r, $bdf) = @_;
	for (@{$r->{lines}}) {
		return $1 if /^pci \Q$bdf\E .* gsi (\d+)$/;
	}
	return undef;
}

1;
