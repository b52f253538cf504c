/*
 * context_tree.h -- contexts that merge in time proportional to what they
 * hold, not to the ancestry behind them.
 *
 * A task's input is the run's initial context merged with the outputs of
 * all its ancestors in topological order (context.h).  Merging every
 * ancestor again for every dispatch made a layered workflow quadratic.
 * A context tree is that same merge, kept with the topological position of
 * the write behind every value, so that the context after a task is the
 * merge of its direct dependencies' trees and its own output:
 *
 *     after(t) = merge(after(d1), ..., after(dn), output(t) at pos(t))
 *
 * and "later in topological order wins" still holds where the
 * dependencies' ancestries overlap or disagree: for every key, the value
 * of the latest write wins, objects written after the latest non-object
 * write merge, and what such a write replaced is gone.
 *
 * Trees are immutable and reference-counted; a merge shares every subtree
 * one side alone decides, so a task without output shares its input, and a
 * chain costs nothing per link.  Values and keys are borrowed from the
 * jansson objects the trees were made from, which each tree holds a
 * reference to.
 *
 * Positions: 0 for the run's initial context, 1 + the task's place in the
 * workflow's topological order for a task's output; each position is
 * written once.  Loop thread only (no locking, jansson's reference counts).
 */
#ifndef SY_CONTEXT_TREE_H
#define SY_CONTEXT_TREE_H

#include <jansson.h>
#include <stdint.h>

typedef struct sy_context_tree sy_context_tree;

/* The tree of one write: the object `obj` (not NULL) written at `pos`.
 * Holds a reference to obj, which must not change afterwards.  NULL when
 * out of memory. */
sy_context_tree *sy_context_tree_from_object(json_t *obj, uint32_t pos);

/* The merge of a and b (either may be NULL: the other, shared).  A new
 * reference, or NULL when out of memory or when both are NULL. */
sy_context_tree *sy_context_tree_merge(sy_context_tree *a, sy_context_tree *b);

/* Another reference to t (NULL stays NULL). */
sy_context_tree *sy_context_tree_ref(sy_context_tree *t);

/* Drops a reference; frees the tree with its last.  NULL is fine. */
void sy_context_tree_unref(sy_context_tree *t);

/* The context as a new JSON object: keys in the order they first appeared
 * (as the ancestor-by-ancestor merge leaves them), values shared with the
 * objects the tree was made from (read them only).  An empty tree (NULL)
 * is {}.  NULL when out of memory. */
json_t *sy_context_tree_json(const sy_context_tree *t);

#endif
