package io.github.cdc2delta.dbzjava;

import java.math.BigDecimal;
import java.sql.Date;
import java.sql.Timestamp;
import java.sql.Types;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.debezium.connector.sqlserver.SqlServerValueConverters;
import io.debezium.relational.Column;
import io.debezium.relational.Table;
import io.debezium.relational.TableId;

import microsoft.sql.DateTimeOffset;

/**
 * sales.dbo.all_types: the table of internal/dbzgen's EveryType, declared as
 * Debezium's SQL Server connector reads it from the JDBC driver's
 * DatabaseMetaData.getColumns (type name, JDBC type, COLUMN_SIZE,
 * DECIMAL_DIGITS), and the rows the driver hands to the value converters
 * (the Java objects mssql-jdbc returns; time columns through getTimestamp,
 * as SqlServerConnection.getColumnValue reads them).
 */
final class AllTypes {
    static final TableId ID = new TableId("sales", "dbo", "all_types");

    /** One column as getColumns describes it. */
    record Col(String name, String typeName, int jdbcType, int size, Integer digits) {
    }

    static final int SQL_VARIANT = -150; // microsoft.sql.Types.SQL_VARIANT
    static final int DATETIMEOFFSET = -155; // microsoft.sql.Types.DATETIMEOFFSET

    static final List<Col> COLUMNS = List.of(
            new Col("id", "int", Types.INTEGER, 10, 0),
            new Col("c_bit", "bit", Types.BIT, 1, null),
            new Col("c_tinyint", "tinyint", Types.TINYINT, 3, 0),
            new Col("c_smallint", "smallint", Types.SMALLINT, 5, 0),
            new Col("c_int", "int", Types.INTEGER, 10, 0),
            new Col("c_bigint", "bigint", Types.BIGINT, 19, 0),
            new Col("c_real", "real", Types.REAL, 24, null),
            new Col("c_float24", "real", Types.REAL, 24, null),
            new Col("c_float", "float", Types.FLOAT, 53, null),
            new Col("c_decimal", "decimal", Types.DECIMAL, 38, 10),
            new Col("c_decimal_int", "decimal", Types.DECIMAL, 38, 0),
            new Col("c_numeric", "numeric", Types.NUMERIC, 18, 0),
            new Col("c_numeric_5_5", "numeric", Types.NUMERIC, 5, 5),
            new Col("c_money", "money", Types.DECIMAL, 19, 4),
            new Col("c_smallmoney", "smallmoney", Types.DECIMAL, 10, 4),
            new Col("c_char", "char", Types.CHAR, 5, null),
            new Col("c_nchar", "nchar", Types.NCHAR, 5, null),
            new Col("c_varchar", "varchar", Types.VARCHAR, 50, null),
            new Col("c_nvarchar", "nvarchar", Types.NVARCHAR, 50, null),
            new Col("c_varchar_max", "varchar", Types.LONGVARCHAR, Integer.MAX_VALUE, null),
            new Col("c_nvarchar_max", "nvarchar", Types.LONGNVARCHAR, 1073741823, null),
            new Col("c_text", "text", Types.LONGVARCHAR, Integer.MAX_VALUE, null),
            new Col("c_ntext", "ntext", Types.LONGNVARCHAR, 1073741823, null),
            new Col("c_xml", "xml", Types.LONGNVARCHAR, 1073741823, null),
            new Col("c_uniqueidentifier", "uniqueidentifier", Types.CHAR, 36, null),
            new Col("c_binary", "binary", Types.BINARY, 4, null),
            new Col("c_varbinary", "varbinary", Types.VARBINARY, 16, null),
            new Col("c_varbinary_max", "varbinary", Types.LONGVARBINARY, Integer.MAX_VALUE, null),
            new Col("c_image", "image", Types.LONGVARBINARY, Integer.MAX_VALUE, null),
            new Col("c_rowversion", "timestamp", Types.BINARY, 8, null),
            new Col("c_geometry", "geometry", Types.LONGVARBINARY, Integer.MAX_VALUE, null),
            new Col("c_geography", "geography", Types.LONGVARBINARY, Integer.MAX_VALUE, null),
            new Col("c_hierarchyid", "hierarchyid", Types.VARBINARY, 892, null),
            new Col("c_sql_variant", "sql_variant", SQL_VARIANT, 8000, null),
            new Col("c_date", "date", Types.DATE, 10, 0),
            new Col("c_time0", "time", Types.TIME, 8, 0),
            new Col("c_time3", "time", Types.TIME, 12, 3),
            new Col("c_time6", "time", Types.TIME, 15, 6),
            new Col("c_time", "time", Types.TIME, 16, 7),
            new Col("c_datetime", "datetime", Types.TIMESTAMP, 23, 3),
            new Col("c_smalldatetime", "smalldatetime", Types.TIMESTAMP, 16, 0),
            new Col("c_datetime2_0", "datetime2", Types.TIMESTAMP, 19, 0),
            new Col("c_datetime2_3", "datetime2", Types.TIMESTAMP, 23, 3),
            new Col("c_datetime2_6", "datetime2", Types.TIMESTAMP, 26, 6),
            new Col("c_datetime2", "datetime2", Types.TIMESTAMP, 27, 7),
            new Col("c_datetimeoffset3", "datetimeoffset", DATETIMEOFFSET, 30, 3),
            new Col("c_datetimeoffset", "datetimeoffset", DATETIMEOFFSET, 34, 7),
            new Col("Unit Price", "money", Types.DECIMAL, 19, 4));

    static Table table() {
        List<Column> cols = new ArrayList<>();
        int pos = 1;
        for (Col c : COLUMNS) {
            var e = Column.editor().name(c.name()).type(c.typeName()).jdbcType(c.jdbcType())
                    .length(c.size()).optional(!c.name().equals("id")).position(pos++);
            if (c.digits() != null) {
                e.scale(c.digits());
            }
            cols.add(e.create());
        }
        return Table.editor().tableId(ID).addColumns(cols).setPrimaryKeyNames("id").create();
    }

    static Timestamp ts(String iso) {
        return Timestamp.valueOf(LocalDateTime.parse(iso));
    }

    /** A time column's value: SqlServerConnection reads time through getTimestamp (1900-01-01). */
    static Timestamp time(String iso) {
        return Timestamp.valueOf(LocalDateTime.of(LocalDate.of(1900, 1, 1), LocalTime.parse(iso)));
    }

    /** A datetimeoffset value: the driver's UTC timestamp and offset. */
    static DateTimeOffset dto(String localIso, int offsetMinutes) {
        // The driver's timestamp holds the instant in epoch milliseconds of
        // the proleptic Gregorian calendar, which SqlServerValueConverters
        // reads with getTime() and getNanos().
        var instant = LocalDateTime.parse(localIso).toInstant(ZoneOffset.ofTotalSeconds(offsetMinutes * 60));
        Timestamp utc = new Timestamp(instant.toEpochMilli());
        utc.setNanos(instant.getNano());
        return DateTimeOffset.valueOf(utc, offsetMinutes);
    }

    static byte[] bytes(int... b) {
        byte[] out = new byte[b.length];
        for (int i = 0; i < b.length; i++) {
            out[i] = (byte) b[i];
        }
        return out;
    }

    /** Typical values in every column. */
    static Object[] typical(int id) {
        return new Object[]{
                id, true, (short) 200, (short) -12345, 123456789, 9007199254740993L,
                3.14f, 2.25f, Math.PI,
                new BigDecimal("1234567890123456789.0123456789"),
                new BigDecimal("99999999999999999999999999999999999999"),
                new BigDecimal("123456789012345678"),
                new BigDecimal("0.12345"),
                new BigDecimal("922337203685477.5807"),
                new BigDecimal("-214748.3648"),
                "ab   ", "ñé   ", "hello", "日本語 ✓", "a long text", "ŁÓDŹ łódź", "text", "ntext ü",
                "<a b=\"1\">x</a>", "6F9619FF-8B86-D011-B42D-00C04FC964FF",
                bytes(1, 2, 3, 4), bytes(0, 255, 128, 7), bytes(0xde, 0xad, 0xbe, 0xef), bytes(0x89, 'P', 'N', 'G'),
                bytes(0, 0, 0, 0, 0, 0, 0x07, 0xd1),
                bytes(0, 0, 0, 0, 1, 0x0c, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0, 0, 0, 0, 0, 0, 0, 0x40),
                bytes(0xe6, 0x10, 0, 0, 1, 0x0c, 0, 0, 0, 0, 0, 0, 0x4a, 0x40, 0, 0, 0, 0, 0, 0, 0x2a, 0x40),
                bytes(0x58),
                "variant",
                Date.valueOf("2024-02-29"),
                time("13:45:30"), time("13:45:30.123"), time("13:45:30.123456"), time("13:45:30.1234567"),
                ts("2024-02-29T13:45:30.123"), ts("2024-02-29T13:46:00"),
                ts("2024-02-29T13:45:30"), ts("2024-02-29T13:45:30.123"), ts("2024-02-29T13:45:30.123456"),
                ts("2024-02-29T13:45:30.1234567"),
                dto("2024-02-29T13:45:30.123", 330), dto("2024-02-29T13:45:30.1234567", -480),
                new BigDecimal("12.3400"),
        };
    }

    /** The edges of each type's range. */
    static Object[] extremes(int id) {
        return new Object[]{
                id, false, (short) 255, (short) -32768, Integer.MIN_VALUE, Long.MAX_VALUE,
                -3.4028235e38f, 1.17549435e-38f, -Double.MAX_VALUE,
                new BigDecimal("-9999999999999999999999999999.9999999999"),
                new BigDecimal("-99999999999999999999999999999999999999"),
                new BigDecimal("-999999999999999999"),
                new BigDecimal("-0.99999"),
                new BigDecimal("-922337203685477.5808"),
                new BigDecimal("214748.3647"),
                "     ", "\u0000x   ", "", "tab\tnewline\nquote\"back\\slash", "", "😀", "", "", "<r/>",
                "00000000-0000-0000-0000-000000000000",
                bytes(0, 0, 0, 0), bytes(), bytes(), bytes(0),
                bytes(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff),
                bytes(0), bytes(0), bytes(),
                null,
                Date.valueOf(LocalDate.of(1, 1, 1)),
                time("00:00:00"), time("23:59:59.999"), time("23:59:59.999999"), time("23:59:59.9999999"),
                ts("1753-01-01T00:00:00"), ts("2079-06-06T23:59:00"),
                ts("0001-01-01T00:00:00"), ts("9999-12-31T23:59:59.999"), ts("9999-12-31T23:59:59.999999"),
                ts("9999-12-31T23:59:59.9999999"),
                dto("0001-01-01T00:00:00", -840), dto("9999-12-31T23:59:59.9999999", 840),
                new BigDecimal("0.0000"),
        };
    }

    /** NULL in every column but the key. */
    static Object[] nulls(int id) {
        Object[] row = new Object[COLUMNS.size()];
        row[0] = id;
        return row;
    }

    /**
     * The row as the change table reports an UPDATE that did not touch the
     * (max) columns: SqlServerChangeTablePointer replaces their NULLs with
     * the unavailable-value marker.
     */
    static Object[] untouchedMax(Object[] row) {
        Object[] out = row.clone();
        for (int i = 0; i < COLUMNS.size(); i++) {
            switch (COLUMNS.get(i).name()) {
                case "c_varchar_max", "c_nvarchar_max", "c_varbinary_max" -> out[i] = SqlServerValueConverters.UNAVAILABLE_VALUE;
                default -> {
                }
            }
        }
        return out;
    }

    /**
     * The driver's row as JSON by column name, for the Go side to feed the
     * same values to its own generator: times and timestamps as ISO local
     * text, datetimeoffset as ISO text with its offset, decimals as plain
     * text, bytes in base64, the unavailable marker as "__unavailable__".
     */
    static Map<String, Object> input(Object[] row) {
        if (row == null) {
            return null;
        }
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < COLUMNS.size(); i++) {
            Object v = row[i];
            Object out = v;
            if (v == SqlServerValueConverters.UNAVAILABLE_VALUE) {
                out = "__unavailable__";
            }
            else if (v instanceof DateTimeOffset d) {
                out = d.getOffsetDateTime().toString();
            }
            else if (v instanceof Timestamp t) {
                out = COLUMNS.get(i).jdbcType() == Types.TIME ? t.toLocalDateTime().toLocalTime().toString() : t.toLocalDateTime().toString();
            }
            else if (v instanceof Date d) {
                out = d.toLocalDate().toString();
            }
            else if (v instanceof BigDecimal d) {
                out = d.toPlainString();
            }
            else if (v instanceof byte[] b) {
                out = Base64.getEncoder().encodeToString(b);
            }
            m.put(COLUMNS.get(i).name(), out);
        }
        return m;
    }

    private AllTypes() {
    }
}
