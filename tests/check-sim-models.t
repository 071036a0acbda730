#!/usr/bin/perl
# SPDX-License-Identifier: MIT
#
# TAP: the simulator's core names none of its device models (issue 28):
# outside comments and strings, sim_core.c, sim_pci.c, sim_host.c,
# sim_dump.c, sim_index.c and sim_slab.c name no controller, remapping
# unit or wired-input model, nor their state. They reach the models only
# through struct sim_model_ops, listed once in sim_models.c; the local
# APIC is the core's own controller.
use strict;
use warnings;
use FindBin;

my $root = "$FindBin::Bin/..";
my @words = qw(imsic its gicv2m gicv2 v2m gicd gits vtd dmar amdvi ivrs ioapic aplic rte rtes irte);
my @core = map { "$root/platform/sim/$_" } qw(sim_core.c sim_pci.c sim_host.c sim_dump.c
					      sim_index.c sim_slab.c);
print '1..', scalar(@core) + 1, "\n";
my $n = 0;
my %word = map { lc($_) => 1 } @words;
for my $f (@core) {
	open(my $fh, '<', $f) or die "$f: $!";
	local $/;
	my $text = <$fh>;
	close($fh);
	$text =~ s{/\*.*?\*/}{ }gs;
	$text =~ s{//[^\n]*}{ }g;
	$text =~ s{"(?:\\.|[^"\\])*"}{""}g;
	my %hits;
	for my $id ($text =~ /\b([A-Za-z_]\w*)\b/g) {
		$hits{$id} = 1 if $word{lc $id} || grep { $word{lc $_} } split(/_/, $id);
	}
	my $name = $f =~ s{^\Q$root\E/}{}r;
	$n++;
	print((%hits ? 'not ok' : 'ok') . " $n - $name names no device model" .
	      (%hits ? ': ' . join(', ', sort keys %hits) : '') . "\n");
}
# The registry lists every model file there is.
my @models = map { s{.*/sim_(\w+)\.c$}{$1}r } glob("$root/platform/sim/sim_*.c");
my %core = map { s{.*/sim_(\w+)\.c$}{$1}r => 1 } @core;
open(my $fh, '<', "$root/platform/sim/sim_models.c") or die "sim_models.c: $!";
my $reg = do { local $/; <$fh> };
my @missing = grep { !$core{$_} && $_ ne 'models' && $reg !~ /\&sim_\Q$_\E_ops\b/ } @models;
$n++;
print((@missing ? 'not ok' : 'ok') . " $n - sim_models.c registers every model file" .
      (@missing ? ': not ' . join(', ', @missing) : '') . "\n");
