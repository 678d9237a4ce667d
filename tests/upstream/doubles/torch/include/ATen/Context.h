// TEST DOUBLE: torch's ATen/Context.h exists in every torch install (apex reads it).
