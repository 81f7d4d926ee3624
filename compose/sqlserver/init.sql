-- The sample source database of the compose stack: sales with dbo.customers
-- and dbo.orders (the same tables as `cdc2delta quickstart`), change data
-- capture enabled on the database and both tables, and a few rows for the
-- initial snapshot. Safe to run again: every step checks first.
-- Run by the sqlserver-init service of docker-compose.yml.

IF DB_ID(N'sales') IS NULL
    CREATE DATABASE sales;
GO

USE sales;
GO

IF OBJECT_ID(N'dbo.customers', N'U') IS NULL
    CREATE TABLE dbo.customers (
        customer_id  nvarchar(20)  NOT NULL PRIMARY KEY,
        name         nvarchar(100) NOT NULL,
        email        varchar(200)  NULL,
        country      char(2)       NULL,
        credit_limit decimal(12,2) NULL,
        created_at   datetime2(3)  NOT NULL,
        is_active    bit           NOT NULL
    );
GO

-- [Unit Price] has a space: Debezium's Avro name adjustment turns it into
-- Unit_Price, and cdc2delta restores the SQL Server name from the propagated
-- source column name (column mapping in the Delta table).
IF OBJECT_ID(N'dbo.orders', N'U') IS NULL
    CREATE TABLE dbo.orders (
        order_id     int              NOT NULL PRIMARY KEY,
        customer_id  nvarchar(20)     NOT NULL,
        order_date   date             NULL,
        status       varchar(20)      NULL,
        amount       decimal(10,2)    NULL,
        updated_at   datetime2(3)     NULL,
        [Unit Price] money            NULL,
        created      datetimeoffset   NULL,
        flag         bit              NULL,
        guid         uniqueidentifier NULL
    );
GO

-- CDC needs SQL Server Agent (MSSQL_AGENT_ENABLED=true): the capture job
-- reads the transaction log into the change tables Debezium polls.
IF (SELECT is_cdc_enabled FROM sys.databases WHERE name = N'sales') = 0
    EXEC sys.sp_cdc_enable_db;
GO

IF NOT EXISTS (SELECT 1 FROM cdc.change_tables WHERE source_object_id = OBJECT_ID(N'dbo.customers'))
    EXEC sys.sp_cdc_enable_table @source_schema = N'dbo', @source_name = N'customers',
        @role_name = NULL, @supports_net_changes = 0;
GO

IF NOT EXISTS (SELECT 1 FROM cdc.change_tables WHERE source_object_id = OBJECT_ID(N'dbo.orders'))
    EXEC sys.sp_cdc_enable_table @source_schema = N'dbo', @source_name = N'orders',
        @role_name = NULL, @supports_net_changes = 0;
GO

IF NOT EXISTS (SELECT 1 FROM dbo.customers)
    INSERT INTO dbo.customers (customer_id, name, email, country, credit_limit, created_at, is_active) VALUES
        (N'C001', N'Ada Lovelace',   'ada@example.com',   'GB', 5000.00, '2024-01-15T09:30:00.123', 1),
        (N'C002', N'Grace Hopper',   'grace@example.com', 'US', 7500.50, '2024-02-01T14:00:00.000', 1),
        (N'C003', N'Alan Turing',    NULL,                'GB', NULL,    '2024-03-10T08:15:30.500', 0);
GO

IF NOT EXISTS (SELECT 1 FROM dbo.orders)
    INSERT INTO dbo.orders (order_id, customer_id, order_date, status, amount, updated_at, [Unit Price], created, flag, guid) VALUES
        (1, N'C001', '2024-04-01', 'new',     120.00, '2024-04-01T10:00:00.000', 12.0000, '2024-04-01T10:00:00.1234567+02:00', 1, NEWID()),
        (2, N'C002', '2024-04-02', 'shipped',  75.25, '2024-04-02T11:30:00.250', 75.2500, '2024-04-02T11:30:00.25+00:00',      0, NEWID()),
        (3, N'C001', '2024-04-03', 'new',      NULL,  NULL,                      NULL,    NULL,                                NULL, NULL);
GO
