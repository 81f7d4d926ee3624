package io.github.cdc2delta.dbzjava;

import java.io.ByteArrayOutputStream;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.EncoderFactory;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.json.JsonConverter;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;

import io.apicurio.registry.utils.converter.avro.AvroData;
import io.apicurio.registry.utils.converter.avro.AvroDataConfig;
import io.debezium.relational.TableSchema;

/**
 * Serialises one table's records as a Kafka Connect worker would: the
 * JsonConverter with schemas enabled, and AvroData (Apicurio's port of
 * Confluent's, with Confluent's defaults: connect.meta.data on, enhanced
 * schema support off) written by Avro's GenericDatumWriter behind the
 * Confluent wire header (magic 0, 4-byte schema id: 1 for the key schema,
 * 2 for the value schema).
 */
final class Serializers {
    static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS);
    static final int KEY_ID = 1;
    static final int VALUE_ID = 2;

    private final String topic;
    private final TableSchema table;
    private final AvroData avro;
    private final org.apache.avro.Schema keyAvro;
    private final org.apache.avro.Schema valueAvro;
    private final JsonConverter keyJson = new JsonConverter();
    private final JsonConverter valueJson = new JsonConverter();

    Serializers(String topic, TableSchema table) {
        this.topic = topic;
        this.table = table;
        avro = new AvroData(new AvroDataConfig(Map.of(
                AvroDataConfig.CONNECT_META_DATA_CONFIG, true,
                AvroDataConfig.ENHANCED_AVRO_SCHEMA_SUPPORT_CONFIG, false,
                AvroDataConfig.SCHEMAS_CACHE_SIZE_CONFIG, 100)));
        keyAvro = avro.fromConnectSchema(table.keySchema());
        valueAvro = avro.fromConnectSchema(table.getEnvelopeSchema().schema());
        keyJson.configure(Map.of("schemas.enable", "true"), true);
        valueJson.configure(Map.of("schemas.enable", "true"), false);
    }

    static final int TX_KEY_ID = 3;
    static final int TX_VALUE_ID = 4;
    private org.apache.avro.Schema txKeyAvro;
    private org.apache.avro.Schema txValueAvro;

    /** A transaction-topic record, framed with schema ids 3 (key) and 4 (value). */
    void txRecord(Map<String, Object> e, Struct key, Struct value) {
        if (txKeyAvro == null) {
            txKeyAvro = avro.fromConnectSchema(key.schema());
            txValueAvro = avro.fromConnectSchema(value.schema());
        }
        e.put("key_avro", wire(TX_KEY_ID, txKeyAvro, avro.fromConnectData(key.schema(), key)));
        e.put("value_avro", wire(TX_VALUE_ID, txValueAvro, avro.fromConnectData(value.schema(), value)));
        e.put("key_json", new String(keyJson.fromConnectData(e.get("topic").toString(), key.schema(), key), StandardCharsets.UTF_8));
        e.put("value_json", new String(valueJson.fromConnectData(e.get("topic").toString(), value.schema(), value), StandardCharsets.UTF_8));
        e.put("want", plain(value));
    }

    void record(Map<String, Object> e, Struct key, Struct value) {
        Schema valueSchema = table.getEnvelopeSchema().schema();
        e.put("key_avro", wire(KEY_ID, keyAvro, avro.fromConnectData(table.keySchema(), key)));
        e.put("key_json", new String(keyJson.fromConnectData(topic, table.keySchema(), key), StandardCharsets.UTF_8));
        if (value == null) {
            e.put("value_avro", null);
            e.put("value_json", null);
            return;
        }
        e.put("value_avro", wire(VALUE_ID, valueAvro, avro.fromConnectData(valueSchema, value)));
        e.put("value_json", new String(valueJson.fromConnectData(topic, valueSchema, value), StandardCharsets.UTF_8));
        e.put("want", plain(value));
    }

    private static String wire(int id, org.apache.avro.Schema schema, Object datum) {
        try {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            out.write(0);
            out.write(ByteBuffer.allocate(4).putInt(id).array());
            BinaryEncoder enc = EncoderFactory.get().binaryEncoder(out, null);
            new GenericDatumWriter<Object>(schema).write(datum, enc);
            enc.flush();
            return Base64.getEncoder().encodeToString(out.toByteArray());
        }
        catch (java.io.IOException ex) {
            throw new IllegalStateException("avro write: " + ex.getMessage(), ex);
        }
    }

    /** What the event meant: the Connect value, as JSON (bytes in base64, decimals as text, dates in ms). */
    static Object plain(Object v) {
        if (v instanceof Struct s) {
            Map<String, Object> m = new LinkedHashMap<>();
            for (Field f : s.schema().fields()) {
                m.put(f.name(), plain(s.get(f)));
            }
            return m;
        }
        if (v instanceof List<?> l) {
            List<Object> out = new ArrayList<>();
            for (Object x : l) {
                out.add(plain(x));
            }
            return out;
        }
        if (v instanceof byte[] b) {
            return Base64.getEncoder().encodeToString(b);
        }
        if (v instanceof ByteBuffer bb) {
            byte[] b = new byte[bb.remaining()];
            bb.duplicate().get(b);
            return Base64.getEncoder().encodeToString(b);
        }
        if (v instanceof BigDecimal d) {
            return d.toPlainString();
        }
        if (v instanceof java.util.Date d) {
            return d.getTime();
        }
        return v;
    }

    /** The Connect schema of a row's fields, as Debezium built it. */
    static List<Map<String, Object>> columns(Schema row) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (Field f : row.fields()) {
            Schema s = f.schema();
            Map<String, Object> c = new LinkedHashMap<>();
            c.put("field", f.name());
            c.put("type", s.type().getName());
            c.put("name", s.name());
            c.put("version", s.version());
            c.put("parameters", s.parameters());
            c.put("optional", s.isOptional());
            c.put("default", plain(s.defaultValue()));
            out.add(c);
        }
        return out;
    }

    void writeSchemas(Path dir) throws java.io.IOException {
        Files.writeString(dir.resolve("key.avsc"), keyAvro.toString(true) + "\n");
        Files.writeString(dir.resolve("value.avsc"), valueAvro.toString(true) + "\n");
        if (txKeyAvro != null) {
            Files.writeString(dir.resolve("tx-key.avsc"), txKeyAvro.toString(true) + "\n");
            Files.writeString(dir.resolve("tx-value.avsc"), txValueAvro.toString(true) + "\n");
        }
        Map<String, Object> cols = new LinkedHashMap<>();
        cols.put("topic", topic);
        cols.put("key", columns(table.keySchema()));
        cols.put("value", columns(table.valueSchema()));
        cols.put("source", columns(table.getEnvelopeSchema().schema().field("source").schema()));
        Files.writeString(dir.resolve("schema.json"),
                JSON.writerWithDefaultPrettyPrinter().writeValueAsString(cols) + "\n");
    }
}
