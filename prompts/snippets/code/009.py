def merge_dicts(*dicts):
    result = {}
    for d in dicts:
        result.update(d)
    return result

defaults = {"color": "blue", "size": 10}
overrides = {"size": 12}@@M
print(merge_dicts(defaults, @@Coverrides))@@O
