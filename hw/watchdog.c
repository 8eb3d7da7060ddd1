/* SPDX-License-Identifier: MIT */
/*
 * watchdog.c - SIGALRM backstop for measurements that cannot be polled
 * (see watchdog.h). The message is formatted when arming, so the handler
 * only calls write(2) and _exit(2), both async-signal-safe.
 */
#include "watchdog.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "backend.h"

static char message[768];
static size_t message_len;

static void on_alarm(int sig)
{
    (void)sig;
    if (write(STDERR_FILENO, message, message_len) < 0) {
        /* nothing more can be done */
    }
    _exit(CS_HW_EXIT_TIMEOUT);
}

void cs_hw_watchdog_arm(double seconds, int rank, const char *what, const char *kept)
{
    if (!(seconds > 0)) {
        cs_hw_watchdog_disarm();
        return;
    }
    int n = snprintf(message, sizeof message,
                     "collsim-hw: rank %d: timeout: %s did not finish within %g s%s%s%s\n", rank,
                     what, seconds, kept ? " (rows measured so far are kept in " : "",
                     kept ? kept : "", kept ? ")" : "");
    message_len = n < 0 ? 0 : (size_t)n >= sizeof message ? sizeof message - 1 : (size_t)n;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{0, 0}, {0, 0}};
    it.it_value.tv_sec = (time_t)seconds;
    it.it_value.tv_usec = (suseconds_t)((seconds - (double)(time_t)seconds) * 1e6);
    if (it.it_value.tv_sec == 0 && it.it_value.tv_usec == 0) it.it_value.tv_usec = 1;
    setitimer(ITIMER_REAL, &it, NULL);
}

void cs_hw_watchdog_disarm(void)
{
    struct itimerval it = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &it, NULL);
}
