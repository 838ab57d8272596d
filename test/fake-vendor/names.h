/* Strings a FAKE vendor library hands out through its records (kernel and API names), shared by the fakes that
 * point to names (test/fake-mspti, test/fake-roctracer). The real runtimes own those strings for the life of the
 * process; so does the fake: one copy of each distinct string, kept, so a caller's string may die as soon as the
 * launch returns. Called with the library's lock held. Included once by each fake. */
#ifndef FAKE_VENDOR_NAMES_H
#define FAKE_VENDOR_NAMES_H

#include <stdlib.h>
#include <string.h>

struct fake_name_entry {
  struct fake_name_entry* next;
  char text[];
};
static struct fake_name_entry* fake_names;

static const char* own_name_locked(const char* name) {
  if (!name) return NULL;
  for (struct fake_name_entry* e = fake_names; e; e = e->next)
    if (strcmp(e->text, name) == 0) return e->text;
  size_t n = strlen(name);
  struct fake_name_entry* e = (struct fake_name_entry*)malloc(sizeof *e + n + 1);
  if (!e) return NULL;
  memcpy(e->text, name, n + 1);
  e->next = fake_names;
  fake_names = e;
  return e->text;
}

#endif
