# SPDX-License-Identifier: MIT
#
# Shared helpers of the `umsi inspect` test scripts: where things are.
#   UMSI       the umsi binary (default: <repo>/build/umsi, or $BUILD/umsi)
#   PCI_DUMPS  the real dumps (default: <repo>/../shared/data/pci-dumps)
use strict;
use warnings;
use Cwd qw(abs_path);
use File::Basename qw(dirname);

our $ROOT = abs_path(dirname(__FILE__) . '/../..');
our $UMSI = $ENV{UMSI} // "$ROOT/" . ($ENV{BUILD} // 'build') . '/umsi';
our $DUMPS = $ENV{PCI_DUMPS} // abs_path("$ROOT/..") . '/shared/data/pci-dumps';

# Run a command; return (exit status, stdout, stderr).
sub run_cmd {
	my (@cmd) = @_;
	my $err = "/tmp/umsi-inspect-test.$$.err";
	my $pid = open(my $fh, '-|') // die "fork: $!";
	if (!$pid) {
		open(STDERR, '>', $err) or die;
		exec(@cmd) or die "exec $cmd[0]: $!";
	}
	local $/;
	my $out = <$fh> // '';
	close($fh);
	my $rc = $? >> 8;
	open(my $e, '<', $err) or die;
	my $stderr = <$e> // '';
	close($e);
	unlink($err);
	return ($rc, $out, $stderr);
}

# The dump files (everything but the README).
sub dump_files {
	opendir(my $d, $DUMPS) or return ();
	my @f = sort grep { !/^\./ && !/\.md$/ && -f "$DUMPS/$_" } readdir($d);
	closedir($d);
	return map { "$DUMPS/$_" } @f;
}

# A configuration space under construction: 256 (or $size) bytes, zeroed.
sub cfg_new {
	my ($vendor, $device, $size) = @_;
	my @c = (0) x ($size // 256);
	cfg_w16(\@c, 0, $vendor // 0x8086);
	cfg_w16(\@c, 2, $device // 0x1234);
	return \@c;
}
sub cfg_w8  { my ($c, $o, $v) = @_; $c->[$o] = $v & 0xff }
sub cfg_w16 { my ($c, $o, $v) = @_; cfg_w8($c, $o + $_, $v >> (8 * $_)) for 0 .. 1 }
sub cfg_w32 { my ($c, $o, $v) = @_; cfg_w8($c, $o + $_, $v >> (8 * $_)) for 0 .. 3 }

# Link a capability list: cap_list($c, [0x40, 0x05], [0x60, 0x11], ...).
sub cap_list {
	my ($c, @caps) = @_;
	$c->[6] |= 0x10;                # Status: Capabilities List
	$c->[0x34] = @caps ? $caps[0][0] : 0;
	for my $i (0 .. $#caps) {
		my ($off, $id) = @{$caps[$i]};
		$c->[$off] = $id;
		$c->[$off + 1] = $i < $#caps ? $caps[$i + 1][0] : 0;
	}
}

# lspci -xxx text for one function; $rows limits how many 16-byte rows.
sub dump_text {
	my ($bdf, $c, $rows) = @_;
	my $t = "$bdf Device: test function\n";
	my $n = $rows // @$c / 16;
	for my $r (0 .. $n - 1) {
		$t .= sprintf('%02x:', $r * 16) .
		      join('', map { sprintf(' %02x', $c->[$r * 16 + $_]) } 0 .. 15) . "\n";
	}
	return $t . "\n";
}

sub write_file {
	my ($path, $text) = @_;
	open(my $f, '>', $path) or die "$path: $!";
	binmode($f);
	print $f $text;
	close($f);
}

1;
