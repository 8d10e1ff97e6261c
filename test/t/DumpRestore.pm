# pg_dump and pg_restore of one database into a new one on the same node,
# shared by the TAP tests that check what a dump carries over (022, 030,
# 081, 110, 156, 157).
#
#   dump_restore($node, $src, $dst, %names): pg_dump -Fc of database $src,
#   CREATE DATABASE $dst, pg_restore --exit-on-error of the dump into it;
#   each command is a test point, named by $names{dump} and
#   $names{restore} (default 'pg_dump' and 'pg_restore').  Returns the
#   dump's path.

package DumpRestore;

use strict;
use warnings;
use Exporter 'import';

our @EXPORT = qw(dump_restore);

sub dump_restore
{
	my ($node, $src, $dst, %names) = @_;
	my $dump = $node->basedir . "/$src.dump";

	$node->command_ok(
		[ 'pg_dump', '-Fc', '-f', $dump, '-d', $node->connstr($src) ],
		$names{dump} // 'pg_dump');
	$node->safe_psql('postgres', "CREATE DATABASE $dst");
	$node->command_ok(
		[ 'pg_restore', '--exit-on-error', '-d', $node->connstr($dst), $dump ],
		$names{restore} // 'pg_restore');
	return $dump;
}

1;
