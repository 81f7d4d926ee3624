package io.github.cdc2delta.connectavro;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.EncoderFactory;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.errors.DataException;
import org.apache.kafka.connect.storage.Converter;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.apicurio.registry.utils.converter.avro.AvroData;
import io.apicurio.registry.utils.converter.avro.AvroDataConfig;

/**
 * A Kafka Connect converter that writes what Confluent's AvroConverter
 * writes, for the full tier (Confluent's jar is not on Maven Central): the
 * Connect schema and value mapped to Avro by AvroData (Apicurio's port of
 * Confluent's mapping, with Confluent's defaults: connect.meta.data on,
 * enhanced schema support off), the schema registered under
 * {@code <topic>-key} or {@code <topic>-value} (TopicNameStrategy) through
 * the Confluent REST API at {@code schema.registry.url}, and the record as
 * magic byte 0, the 4-byte schema id and the Avro binary encoding. A null
 * value (a tombstone) stays null.
 *
 * <p>It only serialises: source connectors never read records back.
 */
public final class ConfluentWireAvroConverter implements Converter {
    public static final String REGISTRY_URL = "schema.registry.url";

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private final Map<String, Integer> ids = new ConcurrentHashMap<>();
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();
    private AvroData avro;
    private String registry;
    private boolean isKey;

    @Override
    public void configure(Map<String, ?> configs, boolean isKey) {
        Object url = configs.get(REGISTRY_URL);
        if (url == null || url.toString().isBlank()) {
            throw new ConfigException(REGISTRY_URL, url, "the schema registry's URL is required");
        }
        this.registry = url.toString().replaceAll("/+$", "");
        this.isKey = isKey;
        this.avro = new AvroData(new AvroDataConfig(Map.of(
                AvroDataConfig.CONNECT_META_DATA_CONFIG, true,
                AvroDataConfig.ENHANCED_AVRO_SCHEMA_SUPPORT_CONFIG, false,
                AvroDataConfig.SCHEMAS_CACHE_SIZE_CONFIG, 1000)));
    }

    @Override
    public byte[] fromConnectData(String topic, Schema schema, Object value) {
        if (value == null) {
            return null;
        }
        org.apache.avro.Schema avroSchema = avro.fromConnectSchema(schema);
        int id = register(topic + (isKey ? "-key" : "-value"), avroSchema);
        Object datum = avro.fromConnectData(schema, value);
        try {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            out.write(0);
            out.write(ByteBuffer.allocate(4).putInt(id).array());
            BinaryEncoder enc = EncoderFactory.get().binaryEncoder(out, null);
            new GenericDatumWriter<Object>(avroSchema).write(datum, enc);
            enc.flush();
            return out.toByteArray();
        }
        catch (IOException | RuntimeException e) {
            throw new DataException("encoding a record of " + topic + " as Avro: " + e.getMessage(), e);
        }
    }

    @Override
    public SchemaAndValue toConnectData(String topic, byte[] value) {
        throw new DataException("ConfluentWireAvroConverter only serialises (a source connector's converter)");
    }

    /** register returns the registry's id of schema under subject, registering it once. */
    private int register(String subject, org.apache.avro.Schema schema) {
        String text = schema.toString();
        return ids.computeIfAbsent(subject + "\n" + text, k -> {
            try {
                String body = JSON.writeValueAsString(Map.of("schema", text));
                HttpRequest req = HttpRequest.newBuilder(URI.create(registry + "/subjects/"
                                + URLEncoder.encode(subject, StandardCharsets.UTF_8) + "/versions"))
                        .timeout(TIMEOUT)
                        .header("Content-Type", "application/vnd.schemaregistry.v1+json")
                        .POST(HttpRequest.BodyPublishers.ofString(body))
                        .build();
                HttpResponse<String> resp = http.send(req, HttpResponse.BodyHandlers.ofString());
                if (resp.statusCode() != 200) {
                    throw new DataException("registering " + subject + " at " + registry + ": HTTP "
                            + resp.statusCode() + ": " + resp.body());
                }
                JsonNode id = JSON.readTree(resp.body()).get("id");
                if (id == null || !id.canConvertToInt()) {
                    throw new DataException("registering " + subject + ": no id in " + resp.body());
                }
                return id.asInt();
            }
            catch (IOException e) {
                throw new DataException("registering " + subject + " at " + registry + ": " + e.getMessage(), e);
            }
            catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new DataException("registering " + subject + ": interrupted", e);
            }
        });
    }
}
