#!/usr/bin/env bash
# test/run.d/options.sh: the SQL the table of options writes
# (src/codec/options.def -> scripts/options.pl -> the "-- @options" blocks
# of sql/objects/: create_pipeline's and definition_of's signatures,
# pipeline_info's option columns) is up to date.  Fails when options.def
# changed and scripts/options.pl was not run.
# Runs from the repository's top directory.
set -euo pipefail
root=${SF_ROOT:-$(pwd)}
perl "$root/scripts/options.pl" --check
echo "options: the generated blocks of sql/objects/ match src/codec/options.def"
