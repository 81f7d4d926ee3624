#!/usr/bin/env bash
# kafka-tool.sh NAME ARGS... runs one of Kafka's own command-line tools with
# the jars that kafka.sh resolved, like bin/NAME.sh of the binary distribution:
#
#   scripts/setup/kafka-tool.sh kafka-consumer-groups --bootstrap-server 127.0.0.1:9092 --describe --group g
#
# NAME is a tool name (with or without the kafka- prefix and .sh suffix) or a
# fully qualified main class.
set -euo pipefail

name=${1:?usage: kafka-tool.sh NAME ARGS...}
shift
name=${name%.sh}
name=${name#kafka-}
case "$name" in
consumer-groups) class=org.apache.kafka.tools.consumer.group.ConsumerGroupCommand ;;
share-groups) class=org.apache.kafka.tools.consumer.group.ShareGroupCommand ;;
streams-groups) class=org.apache.kafka.tools.streams.StreamsGroupCommand ;;
groups) class=org.apache.kafka.tools.GroupsCommand ;;
topics) class=org.apache.kafka.tools.TopicCommand ;;
configs) class=kafka.admin.ConfigCommand ;;
console-producer) class=org.apache.kafka.tools.ConsoleProducer ;;
console-consumer) class=org.apache.kafka.tools.consumer.ConsoleConsumer ;;
get-offsets) class=org.apache.kafka.tools.GetOffsetShell ;;
delete-records) class=org.apache.kafka.tools.DeleteRecordsCommand ;;
transactions) class=org.apache.kafka.tools.TransactionsCommand ;;
metadata-quorum) class=org.apache.kafka.tools.MetadataQuorumCommand ;;
features) class=org.apache.kafka.tools.FeatureCommand ;;
log-dirs) class=org.apache.kafka.tools.LogDirsCommand ;;
acls) class=org.apache.kafka.tools.AclCommand ;;
leader-election) class=org.apache.kafka.tools.LeaderElectionCommand ;;
reassign-partitions) class=org.apache.kafka.tools.reassign.ReassignPartitionsCommand ;;
broker-api-versions) class=org.apache.kafka.tools.BrokerApiVersionsCommand ;;
cluster) class=org.apache.kafka.tools.ClusterTool ;;
storage) class=kafka.tools.StorageTool ;;
*.*) class=$name ;;
*)
	echo "kafka-tool.sh: unknown tool '$name'" >&2
	exit 2
	;;
esac
exec bash "$(dirname "${BASH_SOURCE[0]}")/kafka.sh" java "$class" "$@"
