-- streamforge schema, the guard: the schemas are the extension's.
--
-- Runs first in CREATE EXTENSION and in every ALTER EXTENSION UPDATE (the
-- update scripts include or copy this piece before anything else), before
-- any object is created or replaced.  The control file's "schema =
-- streamforge" makes CREATE EXTENSION use an existing schema of that name
-- whoever made it; a role that could create it (any role with CREATE on
-- the database) could fill it with look-alike functions and operators
-- that the definitions below would bind to, or drop and replace the
-- extension's objects later as the schema's owner (issue 21).  So each of
-- streamforge and streamforge_internal, if it exists, must be
--   - owned by a superuser or by the extension's owner,
--   - closed to CREATE for every other role (PUBLIC included),
--   - free of objects that are not members of the extension: no function,
--     procedure, aggregate, operator, type, domain, table, view, sequence,
--     collation, conversion, operator class or family, text search object,
--     statistics object, cast or other extension (the indexes, row types
--     and array types of members go with them);
-- and streamforge_internal, which this script creates, must be a member
-- of the extension: at CREATE EXTENSION (and at the update from 0.1.0,
-- which creates it) it must not exist at all.
-- At CREATE EXTENSION nothing is a member yet, so streamforge must be
-- empty: the schema CREATE EXTENSION has just made passes, and so does an
-- empty one a superuser made beforehand (docs/security.md, "Threat
-- model").  Otherwise the command fails before it has changed anything,
-- with 42P06 (the schema exists and is not the extension's) or 42501 (a
-- role that is not trusted owns it or may create objects in it).
--
-- The block runs with the script's search_path (streamforge, pg_temp, with
-- pg_catalog searched first), where a look-alike may already exist: every
-- name in it is qualified.
DO LANGUAGE plpgsql $schemas$
DECLARE
    ext pg_catalog.oid;
    extowner pg_catalog.oid;
    nsp record;
    bad record;
    nbad pg_catalog.int8;
BEGIN
    SELECT e.oid, e.extowner INTO ext, extowner
      FROM pg_catalog.pg_extension AS e
     WHERE e.extname OPERATOR(pg_catalog.=) 'streamforge';
    FOR nsp IN
        SELECT n.oid, n.nspname, n.nspowner, n.nspacl,
               pg_catalog.pg_get_userbyid(n.nspowner) AS owner_name,
               EXISTS (SELECT 1 FROM pg_catalog.pg_depend AS d
                        WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_namespace'::pg_catalog.regclass
                          AND d.objid OPERATOR(pg_catalog.=) n.oid
                          AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass
                          AND d.refobjid OPERATOR(pg_catalog.=) ext
                          AND d.deptype OPERATOR(pg_catalog.=) 'e') AS member
          FROM pg_catalog.pg_namespace AS n
         WHERE n.nspname OPERATOR(pg_catalog.=) ANY (ARRAY['streamforge', 'streamforge_internal']::pg_catalog.name[])
         ORDER BY n.nspname
    LOOP
        IF nsp.nspname OPERATOR(pg_catalog.=) 'streamforge_internal' AND NOT nsp.member THEN
            RAISE EXCEPTION USING
                ERRCODE = '42P06',
                MESSAGE = pg_catalog.format('schema "%s" already exists and is not a member of extension "streamforge"',
                                            nsp.nspname),
                DETAIL = pg_catalog.format('streamforge creates this schema itself.  One made by someone else (here owned by role "%s") may hold objects that the extension''s functions would call.',
                                           nsp.owner_name),
                HINT = 'Find out who created the schema and why, then drop or rename it and run the command again.';
        END IF;
        IF nsp.nspowner OPERATOR(pg_catalog.<>) extowner
           AND NOT (SELECT r.rolsuper FROM pg_catalog.pg_roles AS r
                     WHERE r.oid OPERATOR(pg_catalog.=) nsp.nspowner) THEN
            RAISE EXCEPTION USING
                ERRCODE = '42501',
                MESSAGE = pg_catalog.format('schema "%s" is owned by role "%s", which is neither a superuser nor the owner of extension "streamforge"',
                                            nsp.nspname, nsp.owner_name),
                DETAIL = 'The owner of a schema can drop and replace the objects in it, and streamforge''s functions run with the privileges of the extension''s owner.',
                HINT = pg_catalog.format('Find out who created the schema and why.  If it is empty, drop it and let CREATE EXTENSION create it, or make a superuser its owner (ALTER SCHEMA %s OWNER TO ...).',
                                         pg_catalog.quote_ident(nsp.nspname));
        END IF;
        SELECT CASE WHEN a.grantee OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC'
                    ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(a.grantee)) END AS who
          INTO bad
          FROM pg_catalog.aclexplode(nsp.nspacl) AS a
         WHERE a.privilege_type OPERATOR(pg_catalog.=) 'CREATE'
           AND a.grantee OPERATOR(pg_catalog.<>) nsp.nspowner
         ORDER BY 1 LIMIT 1;
        IF FOUND THEN
            RAISE EXCEPTION USING
                ERRCODE = '42501',
                MESSAGE = pg_catalog.format('schema "%s" grants CREATE to %s',
                                            nsp.nspname, bad.who),
                DETAIL = 'A role that may create objects in the schema can create functions or operators that streamforge''s definitions would call instead of the built-in ones.',
                HINT = pg_catalog.format('Revoke it (REVOKE CREATE ON SCHEMA %s FROM %s) and run the command again.',
                                         pg_catalog.quote_ident(nsp.nspname), bad.who);
        END IF;
        -- every object of the schema that is not a member of the extension
        WITH objs AS (
            SELECT 'pg_catalog.pg_proc'::pg_catalog.regclass AS classid, p.oid AS objid
              FROM pg_catalog.pg_proc AS p WHERE p.pronamespace OPERATOR(pg_catalog.=) nsp.oid
            UNION ALL
            SELECT 'pg_catalog.pg_operator'::pg_catalog.regclass, o.oid
              FROM pg_catalog.pg_operator AS o WHERE o.oprnamespace OPERATOR(pg_catalog.=) nsp.oid
            UNION ALL
            -- tables, views, sequences, foreign tables (not their indexes)
            SELECT 'pg_catalog.pg_class'::pg_catalog.regclass, c.oid
              FROM pg_catalog.pg_class AS c
             WHERE c.relnamespace OPERATOR(pg_catalog.=) nsp.oid
               AND c.relkind OPERATOR(pg_catalog.=) ANY (ARRAY['r', 'p', 'v', 'm', 'S', 'f']::pg_catalog."char"[])
            UNION ALL
            -- types of their own: not the row type of a relation (the
            -- relation is checked), nor an array or multirange type (its
            -- element or range is checked)
            SELECT 'pg_catalog.pg_type'::pg_catalog.regclass, t.oid
              FROM pg_catalog.pg_type AS t
             WHERE t.typnamespace OPERATOR(pg_catalog.=) nsp.oid
               AND t.typtype OPERATOR(pg_catalog.<>) 'm'
               AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_type AS e
                                WHERE e.typarray OPERATOR(pg_catalog.=) t.oid)
               AND (t.typrelid OPERATOR(pg_catalog.=) 0
                    OR (SELECT c.relkind FROM pg_catalog.pg_class AS c
                         WHERE c.oid OPERATOR(pg_catalog.=) t.typrelid) OPERATOR(pg_catalog.=) 'c')
            UNION ALL
            SELECT 'pg_catalog.pg_collation'::pg_catalog.regclass, x.oid
              FROM pg_catalog.pg_collation AS x WHERE x.collnamespace OPERATOR(pg_catalog.=) nsp.oid
            UNION ALL
            SELECT 'pg_catalog.pg_conversion'::pg_catalog.regclass, x.oid
              FROM pg_catalog.pg_conversion AS x WHERE x.connamespace OPERATOR(pg_catalog.=) nsp.oid
            UNION ALL
            SELECT 'pg_catalog.pg_opclass'::pg_catalog.regclass, x.oid
              FROM pg_catalog.pg_opclass AS x WHERE x.opcnamespace OPERATOR(pg_catalog.=) nsp.oid
            UNION ALL
            SELECT 'pg_catalog.pg_opfamily'::pg_catalog.regclass, x.oid
              FROM pg_catalog.pg_opfamily AS x WHERE x.opfnamespace OPERATOR(pg_catalog.=) nsp.oid
            UNION ALL
            SELECT 'pg_catalog.pg_ts_config'::pg_catalog.regclass, x.oid
              FROM pg_catalog.pg_ts_config AS x WHERE x.cfgnamespace OPERATOR(pg_catalog.=) nsp.oid
            UNION ALL
            SELECT 'pg_catalog.pg_ts_dict'::pg_catalog.regclass, x.oid
              FROM pg_catalog.pg_ts_dict AS x WHERE x.dictnamespace OPERATOR(pg_catalog.=) nsp.oid
            UNION ALL
            SELECT 'pg_catalog.pg_ts_parser'::pg_catalog.regclass, x.oid
              FROM pg_catalog.pg_ts_parser AS x WHERE x.prsnamespace OPERATOR(pg_catalog.=) nsp.oid
            UNION ALL
            SELECT 'pg_catalog.pg_ts_template'::pg_catalog.regclass, x.oid
              FROM pg_catalog.pg_ts_template AS x WHERE x.tmplnamespace OPERATOR(pg_catalog.=) nsp.oid
            UNION ALL
            SELECT 'pg_catalog.pg_statistic_ext'::pg_catalog.regclass, x.oid
              FROM pg_catalog.pg_statistic_ext AS x WHERE x.stxnamespace OPERATOR(pg_catalog.=) nsp.oid
            UNION ALL
            SELECT 'pg_catalog.pg_extension'::pg_catalog.regclass, x.oid
              FROM pg_catalog.pg_extension AS x
             WHERE x.extnamespace OPERATOR(pg_catalog.=) nsp.oid
               AND x.oid OPERATOR(pg_catalog.<>) ext
            UNION ALL
            -- casts from or to a type of the schema
            SELECT 'pg_catalog.pg_cast'::pg_catalog.regclass, x.oid
              FROM pg_catalog.pg_cast AS x
             WHERE EXISTS (SELECT 1 FROM pg_catalog.pg_type AS t
                            WHERE t.oid OPERATOR(pg_catalog.=) ANY (ARRAY[x.castsource, x.casttarget])
                              AND t.typnamespace OPERATOR(pg_catalog.=) nsp.oid)),
        foreign_objs AS (
            SELECT o.classid, o.objid FROM objs AS o
             WHERE NOT EXISTS (
                SELECT 1 FROM pg_catalog.pg_depend AS d
                 WHERE d.classid OPERATOR(pg_catalog.=) o.classid
                   AND d.objid OPERATOR(pg_catalog.=) o.objid
                   AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass
                   AND d.refobjid OPERATOR(pg_catalog.=) ext
                   AND d.deptype OPERATOR(pg_catalog.=) 'e'))
        SELECT (SELECT pg_catalog.count(*) FROM foreign_objs) AS n,
               (SELECT i.type OPERATOR(pg_catalog.||) ' ' OPERATOR(pg_catalog.||) i.identity
                  FROM pg_catalog.pg_identify_object(f.classid, f.objid, 0) AS i) AS what
          INTO bad
          FROM foreign_objs AS f
         ORDER BY 2 LIMIT 1;
        IF FOUND THEN
            nbad := bad.n;
            RAISE EXCEPTION USING
                ERRCODE = '42P06',
                MESSAGE = pg_catalog.format('schema "%s" contains %s, which is not a member of extension "streamforge"',
                                            nsp.nspname, bad.what),
                DETAIL = pg_catalog.format('The schema holds %s %s that the extension did not create.  Such an object can be called instead of the one streamforge''s definitions mean.',
                                           nbad, CASE WHEN nbad OPERATOR(pg_catalog.=) 1 THEN 'object' ELSE 'objects' END),
                HINT = 'Find out who created them and why, then move them to another schema or drop them, and run the command again.';
        END IF;
    END LOOP;
END
$schemas$;
