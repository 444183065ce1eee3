/* errors.h -- the rule for which errors may pass by themselves
 * (errors.c, where the rule is written). A leaf. */
#ifndef FLEET_COMMON_ERRORS_H
#define FLEET_COMMON_ERRORS_H

/* 1 when `status` is an error that may pass without anyone acting (a
 * background loop retries it), else 0. */
int fleet__status_transient(int status);

#endif /* FLEET_COMMON_ERRORS_H */
