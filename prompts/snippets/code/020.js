const express = require("express");
const app = express();
app.use(express.@@Cjson());@@O

app.get("/health", (req, res) => {
  res.json({ status: "@@Mok" });
});

app.listen(3000, () => console.log("Listening on port @@C3000"));
