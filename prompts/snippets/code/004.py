def read_config(path):
    settings = {}
    with open(path) as fh:
        for line in fh:
            line = line.strip()@@O
            # skip blank lines and comments
            if not line or line.startswith(@@C"#"):
                continue
            key, _, value = line.partition(@@C"=")
            settings[key.strip()] = value.strip()
    return settings@@O
