# test/t/KafkaTest.pm: what the streamforge_kafka TAP tests (14x_kafka_*.pl)
# share: a Kafka cluster (librdkafka's mock cluster, in the process
# kafka/tools/sf_kafka_mock, so that it outlives the servers the tests
# kill) and a server that loads streamforge_kafka.
#
#   my $kafka = KafkaTest->start;         # the cluster; $kafka->{bootstrap}
#   $kafka->cmd('topic ev 3');            # one command, its answer
#   $kafka->produce('ev', 0, $ts, $key, $payload);  # pipelined
#   $kafka->flush;                        # every pipelined message is in
#   my $node = KafkaTest::node('name');   # started, with both extensions
#   KafkaTest::node('old', install_path => $dir)  # a release's binaries
#   KafkaTest::wait_for($node, $sql)      # polls until $sql returns 't'
package KafkaTest;

use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

sub tool
{
	my $t = ($ENV{TESTDIR} // '.') . '/kafka/tools/sf_kafka_mock';
	BAIL_OUT("$t is missing: build kafka/ (librdkafka-dev)") unless -x $t;
	return $t;
}

sub start
{
	my ($class) = @_;
	my $self = bless { in => '', out => '', err => '' }, $class;
	$self->{timer} = IPC::Run::timer(60);
	$self->{h} = IPC::Run::start([tool()], '<', \$self->{in}, '>', \$self->{out},
		'2>', \$self->{err}, $self->{timer});
	$self->{timer}->start(60);
	$self->{h}->pump until $self->{out} =~ /^bootstrap (\S+)\n/m;
	$self->{bootstrap} = $1;
	$self->{out} = '';
	return $self;
}

# Sends one command and returns its answer line (dies on "error ...").
sub cmd
{
	my ($self, $line) = @_;
	$self->{out} = '';
	$self->{in} .= "$line\n";
	$self->{timer}->start(120);
	$self->{h}->pump until $self->{out} =~ /\n/;
	my ($answer) = $self->{out} =~ /^(.*)\n/;
	$self->{out} = '';
	die "sf_kafka_mock: \"$line\": $answer\n" unless $answer =~ /^ok/;
	return $answer;
}

sub produce
{
	my ($self, $topic, $part, $ts, $key, $payload) = @_;
	$self->{in} .= "p $topic $part $ts " . (defined $key ? $key : '-') . " $payload\n";
	$self->{h}->pump_nb if length($self->{in}) > 65536;
	return;
}

sub flush { my ($self) = @_; return $self->cmd('flush'); }

sub stop
{
	my ($self) = @_;
	$self->{in} .= "quit\n";
	$self->{h}->finish;
	return;
}

# A started server with streamforge and streamforge_kafka in "postgres".
sub node
{
	my ($name, %opts) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name,
		$opts{install_path} ? (install_path => $opts{install_path}) : ());
	$node->init;
	$node->append_conf('postgresql.conf', <<"EOC");
shared_preload_libraries = 'streamforge_kafka'
streamforge_kafka.database = 'postgres'
streamforge_kafka.restart_time = 1
streamforge_kafka.retry_max = '2s'
max_worker_processes = 16
restart_after_crash = on
log_min_messages = info
EOC
	$node->append_conf('postgresql.conf', $opts{conf}) if $opts{conf};
	$node->start;
	$node->safe_psql('postgres',
		'CREATE EXTENSION streamforge; CREATE EXTENSION streamforge_kafka;');
	return $node;
}

# Polls until $sql returns 't' (poll_query_until: connection failures
# while a server restarts are retried).
sub wait_for
{
	my ($node, $sql, $what) = @_;
	my $ok = $node->poll_query_until('postgres', $sql);
	ok($ok, $what // "reached: $sql") or diag($node->safe_psql('postgres',
		'SELECT * FROM streamforge_kafka.subscriptions'));
	return $ok;
}

# True once every Kafka partition of the subscription of $pipeline is
# consumed up to its high watermark (the messages produced so far).
sub caught_up_sql
{
	my ($pipeline, $total) = @_;
	return "SELECT COALESCE(sum(consumed_offset + 1), 0) = $total "
	  . "FROM streamforge_kafka.subscriptions WHERE pipeline = '$pipeline'";
}

1;
