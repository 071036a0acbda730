#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
#
# A short, bounded libFuzzer pass over the dump parser, the capability
# decoder and both writers (tests/fuzz/fuzz_inspect.c), seeded from the
# real dumps. `make fuzz-inspect-long` runs a long one.
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempdir);
use FindBin;
require "$FindBin::Bin/lib.pl";

our ($ROOT, $DUMPS);
my $fuzzer = $ENV{FUZZ_INSPECT} // "$ROOT/" . ($ENV{BUILD} // 'build') . '/fuzz/fuzz_inspect';
plan skip_all => "$fuzzer is not built (needs clang with libFuzzer: `make fuzz-inspect`)"
	unless -x $fuzzer;

my $corpus = tempdir(CLEANUP => 1);
my @seeds = -d $DUMPS ? ($DUMPS) : ();
diag("$DUMPS is absent: fuzzing without seeds") unless @seeds;
my ($rc, $out, $err) = run_cmd($fuzzer, '-runs=20000', '-max_total_time=20',
			       '-max_len=65536', "-artifact_prefix=$corpus/",
			       "-dict=$ROOT/tests/fuzz/fuzz_inspect.dict", $corpus, @seeds);
is($rc, 0, 'fuzz_inspect: no crash, leak or undefined behaviour')
	or diag(join("\n", (split /\n/, $err)[-40 .. -1]));
my ($runs) = $err =~ /Done (\d+) runs/;
diag('fuzz_inspect: ' . ($runs // '?') . ' runs');
done_testing();
