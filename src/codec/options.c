/*-------------------------------------------------------------------------
 *
 * options.c
 *	  Typed access to a definition's options, their validators and the
 *	  wording of their problems (codec/options.def, options.h).
 *
 * The table itself (sf_options[]) is expanded in codec_definition.c,
 * next to the document's writer; this file only works on one option of
 * one definition and calls nothing else in codec/.  The messages are
 * those create_pipeline and the loaders gave before the table existed,
 * byte for byte.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/codec/options.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/int.h"

#include "codec/codec.h"

#define FIELD(def, o, type) ((type *) ((char *) (def) + (o)->value_off))
#define CFIELD(def, o, type) ((const type *) ((const char *) (def) + (o)->value_off))

bool
sf_opt_is_set(const SfPipelineDef *def, const SfOption *o)
{
	if (o->has_off >= 0)
		return *(const bool *) ((const char *) def + o->has_off);
	if (o->kind == SF_OPT_KIND_ENUM)
		return *CFIELD(def, o, uint8) != ((const SfOptEnum *) o->ext)->dflt;
	if (o->kind == SF_OPT_KIND_CUSTOM)
		return ((const SfOptHooks *) o->ext)->present(def);
	return true;
}

void
sf_opt_unset(SfPipelineDef *def, const SfOption *o)
{
	if (o->has_off >= 0)
		*(bool *) ((char *) def + o->has_off) = false;
	switch (o->kind)
	{
		case SF_OPT_KIND_INT64:
			*FIELD(def, o, int64) = 0;
			break;
		case SF_OPT_KIND_ENUM:
			*FIELD(def, o, uint8) = ((const SfOptEnum *) o->ext)->dflt;
			break;
		case SF_OPT_KIND_INTERVAL:
			memset(FIELD(def, o, Interval), 0, sizeof(Interval));
			break;
		case SF_OPT_KIND_CUSTOM:
			break;
	}
}

int64
sf_opt_int64(const SfPipelineDef *def, const SfOption *o)
{
	Assert(o->kind == SF_OPT_KIND_INT64);
	return *CFIELD(def, o, int64);
}

void
sf_opt_set_int64(SfPipelineDef *def, const SfOption *o, int64 v)
{
	Assert(o->kind == SF_OPT_KIND_INT64);
	*FIELD(def, o, int64) = v;
	if (o->has_off >= 0)
		*(bool *) ((char *) def + o->has_off) = true;
}

uint8
sf_opt_enum(const SfPipelineDef *def, const SfOption *o)
{
	Assert(o->kind == SF_OPT_KIND_ENUM);
	return *CFIELD(def, o, uint8);
}

void
sf_opt_set_enum(SfPipelineDef *def, const SfOption *o, uint8 v)
{
	Assert(o->kind == SF_OPT_KIND_ENUM);
	*FIELD(def, o, uint8) = v;
}

const Interval *
sf_opt_interval(const SfPipelineDef *def, const SfOption *o)
{
	Assert(o->kind == SF_OPT_KIND_INTERVAL);
	return CFIELD(def, o, Interval);
}

void
sf_opt_set_interval(SfPipelineDef *def, const SfOption *o, const Interval *iv)
{
	Assert(o->kind == SF_OPT_KIND_INTERVAL);
	memcpy(FIELD(def, o, Interval), iv, sizeof(Interval));
	if (o->has_off >= 0)
		*(bool *) ((char *) def + o->has_off) = true;
}

bool
sf_interval_us(const Interval *iv, int64 *us)
{
	return !pg_mul_s64_overflow((int64) iv->day, USECS_PER_DAY, us) &&
		!pg_add_s64_overflow(*us, iv->time, us);
}

/* INT64: not negative (lateness, retention, out_of_orderness) */
SfOptProblem
sf_opt_nonnegative(const SfPipelineDef *def, const SfOption *o)
{
	return sf_opt_int64(def, o) < 0 ? SF_OPT_NEGATIVE : SF_OPT_OK;
}

/* INTERVAL: no months, within int64 microseconds, positive (time_unit, idle_timeout) */
SfOptProblem
sf_opt_positive(const SfPipelineDef *def, const SfOption *o)
{
	const Interval *iv = sf_opt_interval(def, o);
	int64		us;

	if (iv->month != 0)
		return SF_OPT_MONTHS;
	if (!sf_interval_us(iv, &us))
		return SF_OPT_RANGE;
	return us <= 0 ? SF_OPT_NOT_POSITIVE : SF_OPT_OK;
}

void
sf_option_check(const SfPipelineDef *def, const SfOption *o,
				SfOptContext ctx, const char *pipeline)
{
	SfOptProblem problem;

	if (o->check == NULL || !sf_opt_is_set(def, o))
		return;
	problem = o->check(def, o);
	if (problem == SF_OPT_OK)
		return;
	if (ctx == SF_OPT_STORED)
	{
		/* months or beyond int64 microseconds: not positive, as before */
		const char *what = problem == SF_OPT_NEGATIVE ? "negative" :
			"not positive";

		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("corrupt definition of pipeline \"%s\"", pipeline),
				 errdetail("The %s is %s.", o->name, what)));
	}
	Assert(ctx == SF_OPT_ARG);
	switch (problem)
	{
		case SF_OPT_NEGATIVE:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s must not be negative", o->name),
					 errdetail("The %s given is " INT64_FORMAT ".", o->name,
							   sf_opt_int64(def, o))));
			break;
		case SF_OPT_MONTHS:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s must not contain months or years", o->name),
					 errdetail("A month has no fixed length in microseconds.")));
			break;
		case SF_OPT_RANGE:
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("%s is out of range", o->name)));
			break;
		case SF_OPT_NOT_POSITIVE:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s must be greater than zero", o->name)));
			break;
		case SF_OPT_OK:
			break;
	}
}

/*
 * "P<days>DT<seconds>S": days and time apart (exact: '1 day' and '24
 * hours' differ, as they do for PostgreSQL), seconds signed with at most
 * 6 fraction digits and no trailing zeros; ::interval reads it under any
 * IntervalStyle.  No months: the validators refuse them.
 */
void
sf_interval_write(StringInfo buf, const Interval *iv)
{
	uint64		t = iv->time < 0 ? -(uint64) iv->time : (uint64) iv->time;
	uint64		frac = t % USECS_PER_SEC;

	appendStringInfo(buf, "\"P%dDT%s" UINT64_FORMAT, iv->day,
					 iv->time < 0 ? "-" : "", t / USECS_PER_SEC);
	if (frac != 0)
	{
		char		digits[8];
		int			n = 6;

		snprintf(digits, sizeof(digits), "%06u", (unsigned) frac);
		while (digits[n - 1] == '0')
			n--;
		digits[n] = '\0';
		appendStringInfo(buf, ".%s", digits);
	}
	appendStringInfoString(buf, "S\"");
}
