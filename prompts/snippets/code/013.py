async def download_all(session, urls):
    tasks = [asyncio.create_task(fetch(session, u)) for u in urls]
    results = await asyncio.@@Mgather(*tasks, return_exceptions=True)
    ok = [r for r in results if not isinstance(r, @@CException)]
    return @@Mok
