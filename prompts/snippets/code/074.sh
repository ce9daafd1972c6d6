git checkout -b feature/login
git add src/auth.py@@M
git commit -m "Add login @@Mform"
git push -u origin @@Cfeature/login
