#!/usr/bin/perl
# SPDX-License-Identifier: MIT
#
# TAP: the IRQ core (src/irq) and the PCI layer (src/pci) know no
# interrupt controller (issue 25): outside comments, no file there names a
# back end, a controller's registers or a controller flag. The one named
# back end allowed is umsi_system_create()'s documented default
# (umsi_config.ctl NULL: the x86 local APIC, src/irq/system.c).
use strict;
use warnings;
use FindBin;

my $root = "$FindBin::Bin/..";
my @words = qw(x86 riscv arm64 lapic imsic vtd gicv3 gicv2m v2m spi gic lpi apic ioapic its
	       global_space split_blocks MOVE_COMMAND MOVE_MESSAGE eoi_reg);
my @files = sort(glob("$root/src/irq/*.[ch]"), glob("$root/src/pci/*.[ch]"));
print '1..', scalar(@files) + 1, "\n";
print((@files > 10 ? 'ok' : 'not ok') . " 1 - " . scalar(@files) .
      " files in src/irq and src/pci\n");
my $n = 1;
for my $f (@files) {
	open(my $fh, '<', $f) or die "$f: $!";
	local $/;
	my $text = <$fh>;
	close($fh);
	# Comments and strings go: words there are examples, not code.
	$text =~ s{/\*.*?\*/}{ }gs;
	$text =~ s{//[^\n]*}{ }g;
	$text =~ s{"(?:\\.|[^"\\])*"}{""}g;
	# An identifier names a controller when one of its parts (between
	# underscores) is one of the words, in any case.
	my %word = map { lc($_) => 1 } @words;
	my @hits;
	for my $id ($text =~ /\b([A-Za-z_]\w*)\b/g) {
		push @hits, $id if $word{lc $id} ||
				   grep { $word{lc $_} } split(/_/, $id);
	}
	my $name = $f =~ s{^\Q$root\E/}{}r;
	@hits = grep { !($name eq 'src/irq/system.c' &&
			 $_ eq 'umsi_ctl_x86_lapic') } @hits;
	$n++;
	print((@hits ? 'not ok' : 'ok') . " $n - $name names no controller" .
	      (@hits ? ': ' . join(', ', @hits) : '') . "\n");
}
