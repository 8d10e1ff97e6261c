-- streamforge install script (built from the pieces of sql/install/, in
-- name order; the Makefile concatenates them).
-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION streamforge" to load this file. \quit
