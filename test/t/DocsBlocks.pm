# DocsBlocks: the ```sql blocks of a Markdown file, for the tests that run
# the documentation (test/t/080_docs.pl, test/t/050_outputs_cron.pl).
#
# A block is a fenced ```sql ... ``` block.  The line right before its
# opening fence (blank lines between do not count) may be a marker:
#
#   <!-- docs-test: skip -->     not run: the block cannot run as it stands
#                                (use sparingly; prefer ```text for
#                                signatures and fragments that are not SQL)
#   <!-- docs-test: error -->    run, and must fail: it shows an error on
#                                purpose
#   <!-- docs-test: pg_cron -->  needs pg_cron: run by 050_outputs_cron.pl
#                                instead of 080_docs.pl
#
# An unknown docs-test marker is an error, so that a typo cannot silently
# turn a block into an ordinary one.

package DocsBlocks;

use strict;
use warnings;

use Exporter 'import';
our @EXPORT_OK = qw(parse_blocks read_blocks);

# parse_blocks($text): a list of {sql, line, mode}, in order; line is the
# line number of the opening fence, mode '', 'skip', 'error' or 'pg_cron'.
sub parse_blocks
{
	my ($text) = @_;
	my @lines = split /\n/, $text, -1;
	my @blocks;
	my $marker = '';
	my $i = 0;
	while ($i <= $#lines)
	{
		my $l = $lines[$i];
		if ($l =~ /^<!--\s*docs-test:\s*(\S+)\s*-->\s*$/)
		{
			die "line " . ($i + 1) . ": unknown docs-test marker \"$1\"\n"
			  unless $1 eq 'skip' || $1 eq 'error' || $1 eq 'pg_cron';
			$marker = $1;
		}
		elsif ($l =~ /^```sql\s*$/)
		{
			my $start = $i + 1;
			my @sql;
			$i++;
			while ($i <= $#lines && $lines[$i] !~ /^```\s*$/)
			{
				push @sql, $lines[$i];
				$i++;
			}
			die "line $start: unterminated ```sql block\n" if $i > $#lines;
			push @blocks,
			  { sql => join("\n", @sql) . "\n", line => $start, mode => $marker };
			$marker = '';
		}
		elsif ($l =~ /\S/)
		{
			$marker = '';
		}
		$i++;
	}
	return @blocks;
}

# read_blocks($path): parse_blocks of the file's contents.
sub read_blocks
{
	my ($path) = @_;
	open my $fh, '<', $path or die "could not open $path: $!";
	my $text = do { local $/; <$fh> };
	close $fh;
	return parse_blocks($text);
}

1;
