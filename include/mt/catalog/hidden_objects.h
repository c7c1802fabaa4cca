/*-------------------------------------------------------------------------
 *
 * mt/catalog/hidden_objects.h
 *	  Privileges on a materialized table's hidden objects
 *	  (src/catalog/hidden_objects.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_CATALOG_HIDDEN_OBJECTS_H
#define MT_CATALOG_HIDDEN_OBJECTS_H

/* run as the extension's owner: rel is owner's to read (and write) only */
extern void mt_hidden_grant_to_owner(Oid rel, Oid owner, bool write);
/* a new hidden object of table relid, given the privileges it needs */
extern void mt_grant_hidden_object(Oid relid, Oid hidden, bool write);
/* after a change of relid's owner */
extern void mt_sync_hidden_privileges(Oid relid);
/* does a materialized table of this database own rel, of the internal schema? */
extern bool mt_hidden_claimed(Oid rel);

#endif							/* MT_CATALOG_HIDDEN_OBJECTS_H */
