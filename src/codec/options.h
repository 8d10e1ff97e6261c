/*-------------------------------------------------------------------------
 *
 * options.h
 *	  The table of a pipeline definition's options (codec/options.def) and
 *	  the one document that spells a definition.
 *
 * The document is the checkpoint's "definition" (docs/checkpoint-format.md)
 * plus, in its stored form (streamforge.definition(), definition_of()),
 * the options without SF_OPT_CK (time_unit, idle_timeout).  Keys in byte
 * order, each present-or-absent rule given by the table; one writer
 * (codec_definition.c) for both uses.  Public to the layers above through
 * codec/codec.h.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/codec/options.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SF_CODEC_OPTIONS_H
#define SF_CODEC_OPTIONS_H

#include "datatype/timestamp.h"
#include "lib/stringinfo.h"

#include "engine/engine.h"

/* a release as an integer: SF_V(0, 3, 0) = 300 */
#define SF_V(major, minor, patch)	((major) * 10000 + (minor) * 100 + (patch))

typedef enum SfOptKind
{
	SF_OPT_KIND_INT64,			/* bigint; JSON integer; int64 in the def */
	SF_OPT_KIND_ENUM,			/* text, one of a fixed set; JSON string;
								 * uint8 in the def */
	SF_OPT_KIND_INTERVAL,		/* interval, no months; JSON "P<d>DT<s>S";
								 * Interval in the def */
	SF_OPT_KIND_CUSTOM			/* hooks (SfOptHooks) */
} SfOptKind;

#define SF_OPT_CK		0x01	/* in the checkpoint's definition */
#define SF_OPT_OMIT		0x02	/* key absent while unset / at the default */
#define SF_OPT_NOTNULL	0x04	/* a NULL argument is refused (22004) */

/* Where a value comes from: the wording of a problem depends on it */
typedef enum SfOptContext
{
	SF_OPT_ARG,					/* an SQL argument: 22023 "<name> must not be
								 * negative" ... */
	SF_OPT_STORED,				/* the catalog: XX001 "corrupt definition of
								 * pipeline ..." */
	SF_OPT_CHECKPOINT			/* a checkpoint's document */
} SfOptContext;

typedef enum SfOptProblem
{
	SF_OPT_OK = 0,
	SF_OPT_NEGATIVE,			/* INT64 < 0 */
	SF_OPT_NOT_POSITIVE,		/* INTERVAL <= 0 */
	SF_OPT_MONTHS,				/* INTERVAL with months */
	SF_OPT_RANGE				/* INTERVAL beyond int64 microseconds */
} SfOptProblem;

typedef struct SfOption SfOption;
typedef SfOptProblem (*SfOptCheck) (const SfPipelineDef *def, const SfOption *o);

typedef struct SfOptEnum
{
	bool		(*parse) (const char *name, uint8 *value);
	const char *(*name) (uint8 value);
	uint8		dflt;			/* omitted from the document (SF_OPT_OMIT) */
	const char *noun;			/* "emit mode": 22023 "unknown <noun> ..." */
	const char *hint;			/* of that error */
} SfOptEnum;

struct SfJsonReader;
struct CkDoc;

typedef struct SfOptHooks
{
	/* whether def has the member */
	bool		(*present) (const SfPipelineDef *def);
	/* write "key":value (first: no comma before) */
	void		(*write) (StringInfo buf, const SfPipelineDef *def, bool first);
	/* read it from a checkpoint if there; returns whether it was there */
	bool		(*read) (struct SfJsonReader *r, struct CkDoc *doc, bool first);
} SfOptHooks;

struct SfOption
{
	const char *name;			/* argument = key = pipeline_info column */
	const char *sql_type;
	const char *sql_default;	/* NULL: required */
	SfOptKind	kind;
	int			since;			/* SF_V() */
	int			flags;			/* SF_OPT_* */
	int			value_off;		/* offsetof(SfPipelineDef, field) */
	int			has_off;		/* offsetof of has_field; -1: SF_NO_HAS */
	SfOptCheck	check;			/* NULL: none */
	const void *ext;			/* SfOptEnum (ENUM) or SfOptHooks (CUSTOM) */
};

/* in argument order (codec/options.def); expanded in codec_definition.c */
extern const SfOption sf_options[];
extern const int sf_noptions;

extern const SfOption *sf_option_find(const char *name);
extern void sf_options_init(void);

/* typed access to a def's member (INT64, ENUM, INTERVAL) */
extern bool sf_opt_is_set(const SfPipelineDef *def, const SfOption *o);
extern void sf_opt_unset(SfPipelineDef *def, const SfOption *o);
extern int64 sf_opt_int64(const SfPipelineDef *def, const SfOption *o);
extern void sf_opt_set_int64(SfPipelineDef *def, const SfOption *o, int64 v);
extern uint8 sf_opt_enum(const SfPipelineDef *def, const SfOption *o);
extern void sf_opt_set_enum(SfPipelineDef *def, const SfOption *o, uint8 v);
extern const Interval *sf_opt_interval(const SfPipelineDef *def, const SfOption *o);
extern void sf_opt_set_interval(SfPipelineDef *def, const SfOption *o,
								const Interval *iv);

/* the validators of options.def */
extern SfOptProblem sf_opt_nonnegative(const SfPipelineDef *def, const SfOption *o);
extern SfOptProblem sf_opt_positive(const SfPipelineDef *def, const SfOption *o);

/* An interval without months as microseconds; false on overflow */
extern bool sf_interval_us(const Interval *iv, int64 *us);

/*
 * Check option o of def (a no-op for one without a validator or unset);
 * raises the problem in ctx's wording (today's messages, options.c).
 * pipeline: for SF_OPT_STORED messages.
 */
extern void sf_option_check(const SfPipelineDef *def, const SfOption *o,
							SfOptContext ctx, const char *pipeline);

/*
 * The document (codec_definition.c): ctx SF_OPT_CHECKPOINT writes the
 * checkpoint's "definition" byte for byte as 0.3.0 does; SF_OPT_STORED
 * adds the stored-only options.
 */
extern void sf_definition_write(StringInfo buf, const SfPipelineDef *def,
								SfOptContext ctx);

/*
 * A stored document, in its canonical spelling, into def (codec_definition.c):
 * SF003 for anything sf_definition_write would not have written
 */
extern void sf_definition_read(const char *s, int len, SfPipelineDef *def);

/*
 * A string in canonical JSON (canonjson.c), for the canonical spelling of
 * a stored document (persist/definition.c)
 */
extern void sf_json_write_string(StringInfo buf, const char *s, int len);

/* An interval as the document spells it: "P<days>DT<seconds>S" */
extern void sf_interval_write(StringInfo buf, const Interval *iv);

#endif							/* SF_CODEC_OPTIONS_H */
