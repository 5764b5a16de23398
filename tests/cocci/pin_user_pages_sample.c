// SPDX-License-Identifier: GPL-2.0
/*
 * Sample for scripts/coccinelle/api/pin_user_pages.cocci (make lint): the
 * rule must report the four bad_*() functions and none of the good_*() ones.
 * Not compiled.
 */
static int bad_pin_put(unsigned long addr, struct page **pages, int n)
{
	int i, got = pin_user_pages_fast(addr, n, FOLL_WRITE, pages);

	for (i = 0; i < got; i++)
		put_page(pages[i]);
	return got;
}

static int bad_pin_release(unsigned long addr, struct page **pages, int n)
{
	int got = pin_user_pages(addr, n, FOLL_WRITE, pages);

	release_pages(pages, got);
	return got;
}

static int bad_get_unpin(unsigned long addr, struct page **pages, int n)
{
	int got = get_user_pages_fast(addr, n, FOLL_WRITE, pages);

	unpin_user_pages(pages, got);
	return got;
}

static ssize_t bad_extract_put(struct iov_iter *iter, struct page **pages)
{
	size_t off;
	ssize_t got = iov_iter_extract_pages(iter, &pages, 4096, 1, 0, &off);

	put_page(pages[0]);
	return got;
}

static int good_pin_unpin(unsigned long addr, struct page **pages, int n)
{
	int got = pin_user_pages_fast(addr, n, FOLL_WRITE, pages);

	unpin_user_pages_dirty_lock(pages, got, true);
	return got;
}

static int good_get_put(unsigned long addr, struct page **pages, int n)
{
	int i, got = get_user_pages_fast(addr, n, 0, pages);

	for (i = 0; i < got; i++)
		put_page(pages[i]);
	return got;
}

static ssize_t good_extract(struct iov_iter *iter, struct page **pages)
{
	size_t off;
	ssize_t got = iov_iter_extract_pages(iter, &pages, 4096, 1, 0, &off);

	if (iov_iter_extract_will_pin(iter))
		unpin_user_page(pages[0]);
	else
		put_page(pages[0]);
	return got;
}
