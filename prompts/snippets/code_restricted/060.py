import json
from pathlib import Path

settings_path = Path.home() / ".myapp" / "settings.json"
settings_path.parent.mkdir(parents=True, exist_ok=@@CTrue)
settings = {"theme": "light", "autosave": True, "recent": []}
settings_path.write_text(json.dumps(settings, indent=@@M2))@@O
