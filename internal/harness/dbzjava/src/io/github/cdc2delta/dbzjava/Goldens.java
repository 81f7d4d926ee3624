package io.github.cdc2delta.dbzjava;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.source.SourceRecord;

import io.debezium.config.CommonConnectorConfig;
import io.debezium.config.Configuration;
import io.debezium.connector.SnapshotRecord;
import io.debezium.connector.SnapshotType;
import io.debezium.connector.sqlserver.Lsn;
import io.debezium.connector.sqlserver.SqlServerChangeRecordEmitter;
import io.debezium.connector.sqlserver.SqlServerConnectorConfig;
import io.debezium.connector.sqlserver.SqlServerOffsetContext;
import io.debezium.connector.sqlserver.SqlServerPartition;
import io.debezium.connector.sqlserver.SqlServerValueConverters;
import io.debezium.connector.sqlserver.TxLogPosition;
import io.debezium.data.Envelope;
import io.debezium.pipeline.source.spi.EventMetadataProvider;
import io.debezium.pipeline.spi.ChangeRecordEmitter;
import io.debezium.pipeline.txmetadata.TransactionMonitor;
import io.debezium.relational.CustomConverterRegistry;
import io.debezium.relational.RelationalChangeRecordEmitter;
import io.debezium.relational.SnapshotChangeRecordEmitter;
import io.debezium.relational.Table;
import io.debezium.relational.TableSchema;
import io.debezium.relational.TableSchemaBuilder;
import io.debezium.relational.mapping.ColumnMappers;
import io.debezium.spi.topic.TopicNamingStrategy;
import io.debezium.relational.TableId;
import io.debezium.util.Clock;

/**
 * Builds SQL Server change events for sales.dbo.all_types with the classes
 * of Debezium's SQL Server connector (its configuration, value converters,
 * table schema builder, source info, offset context and change record
 * emitters, as SqlServerConnectorTask wires them) and writes them, once per
 * connector-setting variant, with Kafka Connect's JsonConverter and with
 * AvroData in the Confluent wire format.
 *
 * Usage: Goldens OUTDIR
 */
public final class Goldens {

    /** A connector-setting variant: its directory name and connector properties. */
    record Variant(String name, Map<String, String> props) {
    }

    static final List<Variant> VARIANTS = List.of(
            new Variant("default", Map.of()),
            new Variant("propagate", Map.of("column.propagate.source.type", ".*")),
            new Variant("decimal_string", Map.of("decimal.handling.mode", "string", "column.propagate.source.type", ".*")),
            new Variant("decimal_double", Map.of("decimal.handling.mode", "double")),
            new Variant("time_micro", Map.of("time.precision.mode", "adaptive_time_microseconds")),
            new Variant("time_connect", Map.of("time.precision.mode", "connect")),
            new Variant("binary_base64", Map.of("binary.handling.mode", "base64", "column.propagate.source.type", ".*")),
            new Variant("binary_hex", Map.of("binary.handling.mode", "hex", "column.propagate.source.type", ".*")));

    /** Fixed processing time of every event (the envelope's ts_ms). */
    static final Instant NOW = Instant.parse("2026-12-06T12:00:00Z");

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: Goldens OUTDIR");
            System.exit(2);
        }
        Path out = Path.of(args[0]);
        for (Variant v : VARIANTS) {
            Path dir = out.resolve(v.name());
            Files.createDirectories(dir);
            new Goldens(v).write(dir);
            System.err.println("wrote " + dir);
        }
    }

    private final SqlServerConnectorConfig config;
    private final TableSchema schema;
    private final SqlServerPartition partition;
    private final Clock clock = () -> NOW.toEpochMilli();
    private final List<Map<String, Object>> events = new ArrayList<>();
    private final List<Map<String, Object>> txEvents = new ArrayList<>();
    private final String txTopic;
    private final TransactionMonitor monitor;
    private final Serializers ser;

    Goldens(Variant v) {
        Map<String, String> props = new HashMap<>();
        props.put("topic.prefix", "shop");
        props.put("database.names", "sales");
        props.put("database.hostname", "localhost");
        props.put("database.user", "sa");
        props.put("field.name.adjustment.mode", "avro");
        props.put("provide.transaction.metadata", "true");
        props.putAll(v.props());
        config = new SqlServerConnectorConfig(Configuration.from(props));

        TopicNamingStrategy<TableId> topics = config.getTopicNamingStrategy(CommonConnectorConfig.TOPIC_NAMING_STRATEGY, true);
        SqlServerValueConverters converters = new SqlServerValueConverters(config.getDecimalMode(),
                config.getTemporalPrecisionMode(), config.binaryHandlingMode(), config.getUnavailableValuePlaceholder());
        TableSchemaBuilder builder = new TableSchemaBuilder(converters, null, config.schemaNameAdjuster(),
                new CustomConverterRegistry(null), config.getSourceInfoStructMaker().schema(),
                config.getFieldNamer(), true, config.getEventConvertingFailureHandlingMode());
        Table table = AllTypes.table();
        schema = builder.create(topics, table, config.getColumnFilter(), ColumnMappers.create(config), config.getKeyMapper());
        partition = new SqlServerPartition("shop", "sales");
        ser = new Serializers(topics.dataChangeTopic(AllTypes.ID), schema);
        txTopic = topics.transactionTopic();
        monitor = new TransactionMonitor(config, metadataProvider(), config.schemaNameAdjuster(), this::txRecord, txTopic);
    }

    /** The connector's own SqlServerEventMetadataProvider (package-private). */
    private static EventMetadataProvider metadataProvider() {
        try {
            var ctor = Class.forName("io.debezium.connector.sqlserver.SqlServerEventMetadataProvider").getDeclaredConstructor();
            ctor.setAccessible(true);
            return (EventMetadataProvider) ctor.newInstance();
        }
        catch (ReflectiveOperationException e) {
            throw new IllegalStateException("SqlServerEventMetadataProvider: " + e, e);
        }
    }

    /** A BEGIN or END record of the transaction topic. */
    private void txRecord(SourceRecord r) {
        Map<String, Object> e = new LinkedHashMap<>();
        e.put("topic", r.topic());
        ser.txRecord(e, (Struct) r.key(), (Struct) r.value());
        txEvents.add(e);
    }

    void write(Path dir) throws Exception {
        snapshot();
        streaming();
        ser.writeSchemas(dir);
        StringBuilder sb = new StringBuilder();
        for (Map<String, Object> e : events) {
            sb.append(Serializers.JSON.writeValueAsString(e)).append('\n');
        }
        Files.writeString(dir.resolve("events.jsonl"), sb.toString());
        sb = new StringBuilder();
        for (Map<String, Object> e : txEvents) {
            sb.append(Serializers.JSON.writeValueAsString(e)).append('\n');
        }
        Files.writeString(dir.resolve("transactions.jsonl"), sb.toString());
    }

    private void snapshot() throws InterruptedException {
        SqlServerOffsetContext offset = new SqlServerOffsetContext(config,
                TxLogPosition.valueOf(Lsn.valueOf("0000002a:00000100:0001")), SnapshotType.INITIAL, false);
        offset.event(AllTypes.ID, Instant.parse("2026-12-06T11:00:00Z"));
        offset.markSnapshotRecord(SnapshotRecord.FIRST);
        emit("read typical", new SnapshotChangeRecordEmitter<>(partition, offset, AllTypes.typical(1), clock, config), null,
                null, AllTypes.typical(1));
        offset.markSnapshotRecord(SnapshotRecord.LAST);
        emit("read extremes", new SnapshotChangeRecordEmitter<>(partition, offset, AllTypes.extremes(2), clock, config), null,
                null, AllTypes.extremes(2));
    }

    private void streaming() throws InterruptedException {
        SqlServerOffsetContext offset = new SqlServerOffsetContext(config,
                TxLogPosition.valueOf(Lsn.valueOf("0000002a:00000100:0001")), null, true);
        Object[] three = AllTypes.typical(3);
        Object[] threeAfter = AllTypes.typical(3);
        threeAfter[17] = "changed";
        stream(offset, "create typical", SqlServerChangeRecordEmitter.OP_INSERT, "0000002b:00000010:0003", "0000002b:00000010:0002",
                three, null);
        stream(offset, "create nulls", SqlServerChangeRecordEmitter.OP_INSERT, "0000002b:00000010:0003", "0000002b:00000018:0002",
                AllTypes.nulls(4), null);
        stream(offset, "update untouched max", SqlServerChangeRecordEmitter.OP_UPDATE_BEFORE, "0000002c:00000020:0004",
                "0000002c:00000020:0002", AllTypes.untouchedMax(three), AllTypes.untouchedMax(threeAfter));
        Object[] five = AllTypes.nulls(5);
        stream(offset, "update key", SqlServerChangeRecordEmitter.OP_UPDATE_BEFORE, "0000002d:00000030:0004",
                "0000002d:00000030:0002", AllTypes.nulls(4), five);
        stream(offset, "delete", SqlServerChangeRecordEmitter.OP_DELETE, "0000002e:00000040:0003", "0000002e:00000040:0002",
                threeAfter, null);
        monitor.transactionCommittedEvent(partition, offset, Instant.parse("2026-12-06T11:30:00Z"));
    }

    private void stream(SqlServerOffsetContext offset, String name, int op, String commit, String change, Object[] data,
                        Object[] dataNext)
            throws InterruptedException {
        Lsn commitLsn = Lsn.valueOf(commit);
        offset.setChangePosition(TxLogPosition.valueOf(commitLsn, Lsn.valueOf(change), op),
                op == SqlServerChangeRecordEmitter.OP_UPDATE_BEFORE ? 2 : 1);
        offset.event(AllTypes.ID, Instant.parse("2026-12-06T11:30:00Z"));
        Object[] before = op == SqlServerChangeRecordEmitter.OP_INSERT ? null : data;
        Object[] after = op == SqlServerChangeRecordEmitter.OP_DELETE ? null : op == SqlServerChangeRecordEmitter.OP_INSERT ? data : dataNext;
        emit(name, new SqlServerChangeRecordEmitter(partition, offset, op, data, dataNext, clock, config), commitLsn.toString(),
                before, after);
    }

    private void record(String name, Struct key, Struct value, Map<String, Object> input) {
        Map<String, Object> e = new LinkedHashMap<>();
        e.put("event", name);
        if (input != null) {
            e.put("input", input);
        }
        e.put("op", value == null ? "tombstone" : value.getString(Envelope.FieldName.OPERATION));
        ser.record(e, key, value);
        events.add(e);
    }

    /**
     * Runs the emitter and records each record it produces. A streaming
     * event goes through Debezium's TransactionMonitor first, as
     * EventDispatcher sends it: it adds the transaction block and writes
     * BEGIN and END records to the transaction topic.
     */
    private void emit(String name, RelationalChangeRecordEmitter<SqlServerPartition> emitter, String txID, Object[] before,
                      Object[] after)
            throws InterruptedException {
        Map<String, Object> input = new LinkedHashMap<>();
        input.put("before", AllTypes.input(before));
        input.put("after", AllTypes.input(after));
        ChangeRecordEmitter.Receiver<SqlServerPartition> receiver = (p, s, op, key, value, off, headers) -> {
            if (txID != null) {
                monitor.dataEvent(p, AllTypes.ID, off, key, value);
            }
            record(name, (Struct) key, value, input);
            // EventDispatcher's receiver follows a delete with a tombstone.
            if (op == Envelope.Operation.DELETE && config.isEmitTombstoneOnDelete()) {
                record(name + " tombstone", (Struct) key, null, null);
            }
        };
        emitter.emitChangeRecords(schema, receiver);
    }
}
