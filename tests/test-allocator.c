/* SPDX-License-Identifier: MIT */
/*
 * test-allocator.c - the caching allocator's rules (train/allocator.h)
 * against hand-worked cases of c10/cuda/CUDACachingAllocator.cpp: 512-byte
 * rounding, the 2 MiB small segment, the 20 MiB segment under 10 MiB,
 * kRoundLarge, the split rule, reuse per stream, no merge across
 * segments (a deliberately wrong merging allocator would reserve less),
 * and release of cached segments at capacity.
 */
#include <check.h>

#include "testutil.h"
#include "train/allocator.h"

#undef MiB
#define MiB (1024.0 * 1024.0)

START_TEST(small_pool)
{
    cs_allocator *a = cs_allocator_new(0);
    int x = cs_allocator_alloc(a, 100, 0);
    ck_assert_double_eq(cs_allocator_allocated(a), 512);
    ck_assert_double_eq(cs_allocator_reserved(a), 2 * MiB);
    cs_allocator_alloc(a, 1000, 0); /* 1024, same segment */
    ck_assert_double_eq(cs_allocator_allocated(a), 512 + 1024);
    ck_assert_double_eq(cs_allocator_reserved(a), 2 * MiB);
    cs_allocator_release(a, x);
    ck_assert_double_eq(cs_allocator_allocated(a), 1024);
    ck_assert_double_eq(cs_allocator_peak_allocated(a), 1536);
    cs_allocator_delete(a);
}
END_TEST

START_TEST(large_pool)
{
    cs_allocator *a = cs_allocator_new(0);
    cs_allocator_alloc(a, 5 * MiB, 0); /* a 20 MiB segment, split: 15 MiB left > 1 MiB */
    ck_assert_double_eq(cs_allocator_reserved(a), 20 * MiB);
    ck_assert_double_eq(cs_allocator_allocated(a), 5 * MiB);
    cs_allocator_alloc(a, 14.5 * MiB, 0); /* fits the 15 MiB rest; 0.5 MiB not split off */
    ck_assert_double_eq(cs_allocator_reserved(a), 20 * MiB);
    ck_assert_double_eq(cs_allocator_allocated(a), 20 * MiB);
    cs_allocator_alloc(a, 11 * MiB + 1, 0); /* a 12 MiB segment (kRoundLarge), handed out whole */
    ck_assert_double_eq(cs_allocator_reserved(a), 32 * MiB);
    ck_assert_double_eq(cs_allocator_allocated(a), 32 * MiB);
    cs_allocator_delete(a);
}
END_TEST

START_TEST(no_merge_across_segments)
{
    cs_allocator *a = cs_allocator_new(0);
    int x = cs_allocator_alloc(a, 12 * MiB, 0), y = cs_allocator_alloc(a, 12 * MiB, 0);
    cs_allocator_release(a, x);
    cs_allocator_release(a, y);
    cs_allocator_alloc(a, 24 * MiB, 0);
    /* deliberately wrong: merging the two 12 MiB segments would reserve 24 */
    ck_assert_double_eq(cs_allocator_reserved(a), 48 * MiB);
    ck_assert_double_eq(cs_allocator_peak_allocated(a), 24 * MiB);
    /* a freed 24 MiB block serves a 12 MiB request, split */
    cs_allocator_alloc(a, 10 * MiB, 0); /* from a cached 12 MiB segment: 2 MiB rest split */
    ck_assert_double_eq(cs_allocator_reserved(a), 48 * MiB);
    ck_assert_double_eq(cs_allocator_allocated(a), 34 * MiB);
    /* another stream does not see the cache */
    cs_allocator_alloc(a, 10 * MiB, 1);
    ck_assert_double_eq(cs_allocator_reserved(a), 58 * MiB);
    cs_allocator_delete(a);
}
END_TEST

START_TEST(merge_within_segment)
{
    cs_allocator *a = cs_allocator_new(0);
    int x = cs_allocator_alloc(a, 4 * MiB, 0), y = cs_allocator_alloc(a, 4 * MiB, 0);
    ck_assert_double_eq(cs_allocator_reserved(a), 20 * MiB);
    cs_allocator_release(a, x);
    cs_allocator_release(a, y);
    cs_allocator_alloc(a, 18 * MiB, 0); /* the whole 20 MiB segment again, merged */
    ck_assert_double_eq(cs_allocator_reserved(a), 20 * MiB);
    cs_allocator_delete(a);
}
END_TEST

/* A freed block merges with the free block before it as well as after
 * (try_merge_blocks tries prev and next): a merge with the next alone
 * would leave two 4 MiB blocks and cut a new segment. */
START_TEST(merge_with_previous)
{
    cs_allocator *a = cs_allocator_new(0);
    int x = cs_allocator_alloc(a, 4 * MiB, 0), y = cs_allocator_alloc(a, 4 * MiB, 0);
    cs_allocator_alloc(a, 4 * MiB, 0); /* z keeps y's next neighbour busy */
    cs_allocator_release(a, x);
    cs_allocator_release(a, y);
    ck_assert_double_eq(cs_allocator_block_bytes(a, x), 8 * MiB);
    cs_allocator_alloc(a, 8 * MiB, 0);
    ck_assert_double_eq(cs_allocator_reserved(a), 20 * MiB);
    cs_allocator_delete(a);
}
END_TEST

START_TEST(capacity)
{
    cs_allocator *a = cs_allocator_new(30 * MiB);
    int x = cs_allocator_alloc(a, 12 * MiB, 0);
    cs_allocator_release(a, x);
    cs_allocator_alloc(a, 24 * MiB, 0); /* 36 > 30: the cached 12 MiB is returned first */
    ck_assert_double_eq(cs_allocator_reserved(a), 24 * MiB);
    ck_assert(!cs_allocator_out_of_memory(a));
    cs_allocator_alloc(a, 12 * MiB, 0);
    ck_assert(cs_allocator_out_of_memory(a));
    cs_allocator_delete(a);
}
END_TEST

static Suite *allocator_suite(void)
{
    Suite *s = suite_create("allocator");
    TCase *tc = tcase_create("rules");
    tcase_add_test(tc, small_pool);
    tcase_add_test(tc, large_pool);
    tcase_add_test(tc, no_merge_across_segments);
    tcase_add_test(tc, merge_within_segment);
    tcase_add_test(tc, merge_with_previous);
    tcase_add_test(tc, capacity);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return cs_test_run(allocator_suite());
}
