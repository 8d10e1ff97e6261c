/*
 * elems.c: the arrays of one batch statement (mapping.c names the
 * parameters): one element per delivery, in the order the statement
 * delivers them.  Allocated in the caller's context (the batch's).
 */
#include "postgres.h"

#include "utils/array.h"
#include "utils/lsyscache.h"

#include "kafka.h"

void
sfk_elems_init(Elems *e, int cap)
{
	e->n = 0;
	e->cap = cap;
	e->pn = palloc(sizeof(Datum) * cap);
	e->po = palloc(sizeof(Datum) * cap);
	e->k = palloc(sizeof(Datum) * cap);
	e->p = palloc(sizeof(Datum) * cap);
	e->ts = palloc(sizeof(Datum) * cap);
	e->ko = palloc(sizeof(Datum) * cap);
	e->kp = palloc(sizeof(Datum) * cap);
	e->knull = palloc(sizeof(bool) * cap);
	e->pnull = palloc(sizeof(bool) * cap);
	e->m = palloc(sizeof(Msg *) * cap);
}

void
sfk_elems_add(Elems *e, Msg *m, int64 at, Datum pname)
{
	int			i = e->n++;

	Assert(i < e->cap);
	e->pn[i] = pname;
	e->po[i] = Int64GetDatum(at);
	e->k[i] = m->key ? PointerGetDatum(m->key) : (Datum) 0;
	e->knull[i] = m->key == NULL;
	e->p[i] = m->payload ? PointerGetDatum(m->payload) : (Datum) 0;
	e->pnull[i] = m->payload == NULL;
	e->ts[i] = Int64GetDatum(m->ts);
	e->ko[i] = Int64GetDatum(m->offset);
	e->kp[i] = Int32GetDatum(m->part);
	e->m[i] = m;
}

ArrayType *
sfk_mk_array(Datum *d, bool *nulls, int n, Oid type)
{
	int			dims[1] = {n};
	int			lbs[1] = {1};
	int16		len;
	bool		byval;
	char		align;

	get_typlenbyvalalign(type, &len, &byval, &align);
	return construct_md_array(d, nulls, 1, dims, lbs, type, len, byval, align);
}

