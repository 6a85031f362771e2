#ifndef COUNTDOWN_PREFETCH_H
#define COUNTDOWN_PREFETCH_H

/// Asks the processor to bring the cache line holding `address` into its caches, ready to be
/// written, and returns at once. A hint: it never faults and never waits, whatever the address,
/// so an address read from memory without ownership (the bits of a reference) is safe to pass.
/// Swift has no prefetch of its own; a loop that walks a batch of countdowns at random places
/// in memory uses this to have the next ones' lines on their way while it handles this one.
static inline __attribute__((always_inline)) void countdown_prefetch(const void *_Nullable address) {
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(address, 1, 3);
#else
    (void)address;
#endif
}

#endif
