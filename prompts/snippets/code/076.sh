python3 -m venv .venv
source .venv/bin/@@Cactivate
pip install -r @@Crequirements.txt
@@O
