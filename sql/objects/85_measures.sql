-- streamforge objects: measures pipelines (0.3.0, issue 27,
-- docs/aggregates.md).  A pipeline created with measures carries one
-- bigint per named measure per event and computes its declared
-- aggregates; the functions here deliver to and read such pipelines.

-- The storage (the measures and aggregates of the pipeline's definition
-- document, the aggregates column of the outputs) is in
-- sql/schema/20_tables.sql, the
-- types measures_delivery, measures_change and measures_result in
-- sql/schema/10_types.sql.
COMMENT ON TYPE streamforge.measures_delivery IS
    'a delivery of a measures pipeline (one bigint per measure), for streamforge.ingest_measures_batch';
COMMENT ON TYPE streamforge.measures_change IS
    'a change of a measures pipeline: the address, the count and the declared aggregates by name';
COMMENT ON TYPE streamforge.measures_result IS
    'a row of a measures pipeline: the address, the count and the declared aggregates by name';

CREATE OR REPLACE FUNCTION streamforge.ingest_measures(pipeline text, partition text,
    source_offset bigint, event_id text, key text, event_time bigint,
    measures bigint[])
RETURNS SETOF streamforge.measures_change
AS 'MODULE_PATHNAME', 'sf_ingest_measures'
LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 2;
COMMENT ON FUNCTION streamforge.ingest_measures(text, text, bigint, text, text, bigint, bigint[]) IS
    'delivers one event of a measures pipeline (one bigint per measure) at a source offset';

CREATE OR REPLACE FUNCTION streamforge.ingest_measures_batch(pipeline text,
    deliveries streamforge.measures_delivery[])
RETURNS SETOF streamforge.measures_change
AS 'MODULE_PATHNAME', 'sf_ingest_measures_batch'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION streamforge.ingest_measures_batch(text, streamforge.measures_delivery[]) IS
    'delivers the events of a measures pipeline in array order, all or none';

CREATE OR REPLACE FUNCTION streamforge.live_aggregates(pipeline text)
RETURNS SETOF streamforge.measures_result
AS 'MODULE_PATHNAME', 'sf_live_aggregates'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION streamforge.live_aggregates(text) IS
    'every live bucket of a measures pipeline with its declared aggregates, like live()';

CREATE OR REPLACE FUNCTION streamforge.visible_aggregates(pipeline text)
RETURNS SETOF streamforge.measures_result
AS 'MODULE_PATHNAME', 'sf_visible_aggregates'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION streamforge.visible_aggregates(text) IS
    'the visible rows of a measures pipeline with its declared aggregates, like visible()';

CREATE OR REPLACE FUNCTION streamforge.aggregate_columns(pipeline text)
RETURNS TABLE (ordinality integer, name text, type regtype, func text,
               measure text)
AS 'MODULE_PATHNAME', 'sf_aggregate_columns'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION streamforge.aggregate_columns(text) IS
    'the declared aggregates of a pipeline in declaration order, with their SQL types (the members of the aggregates jsonb)';
