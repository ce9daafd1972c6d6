"""The reference wind tunnels geomprobe ships: trained once by the project, identical everywhere.

`windtunnel-TASK` loads the directory `geomprobe/data/windtunnels/TASK` that came with the
package when the package ships that task under the current recipe (SHIPPED below, written by
`scripts/reference_windtunnels.py`): every file there is checked against its SHA-256 on each
load (a few MB: milliseconds), and a missing or changed file is refused in one line. A number
measured on a shipped tunnel is therefore the same on every machine. Without a shipped tunnel
(a recipe changed, or the GEOMPROBE_WINDTUNNEL_STEPS test override) the tunnel is trained on
first use into the cache, as before (geomprobe.windtunnel.builtin).

Stored as float32 safetensors, as trained (no rounding): the four shipped tunnels are a few MB
together. The training checkpoints ship only where they are small (sula: the `@step-N`
revisions); each entry also records the SHA-256 of the weights after the recipe's first steps at
one thread (`first_steps`), so a test can check that `geomprobe windtunnel train --task TASK`
still follows the recipe that made the shipped weights without training it to the end. A CPU
that rounds float32 otherwise with the same torch build and vector capability (measured: AMD EPYC
against the machine that trained them) gets its own digest of the same steps in `first_steps_on`
(`scripts/reference_windtunnels.py --digests-here TASK...`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from geomprobe.errors import ModelNotFoundError

SHIPPED_ROOT = Path(__file__).resolve().parent.parent / "data" / "windtunnels"
# What a shipped directory holds (checkpoints/ as well where the entry lists them)
SHIPPED_FILES = ("config.json", "generation_config.json", "model.safetensors", "tokenizer.json",
                 "tokenizer_config.json", "windtunnel.json", "metrics.json")


# The torch build and CPU kernels the shipped tunnels were trained with: the recipe's first steps
# reproduce them bit for bit there; other CPU kernels (AVX2 against AVX-512) may change the low bits.
MADE_WITH = {"torch": "2.13.0+cpu", "cpu_capability": "AVX512"}


@dataclass(frozen=True)
class ShippedTunnel:
    task: str
    recipe: str  # the recipe's key (geomprobe.windtunnel.builtin.recipe_key) that trained it
    files: dict[str, str]  # path inside the directory -> SHA-256 of its bytes
    first_steps: tuple[int, str] = (0, "")  # (steps, weights_sha256 of the recipe's weights after them)
    # CPU model -> the same digest measured on that CPU (same torch build and capability, other rounding)
    first_steps_on: dict[str, str] = field(default_factory=dict)
    scores: dict = field(default_factory=dict)  # held-out scores against Bayes, from its metrics.json
    made_with: dict = field(default_factory=lambda: dict(MADE_WITH))


def cpu_model() -> str:
    """The processor's model name (Linux /proc/cpuinfo, else platform.processor()): two CPUs with
    the same vector capability (AVX512 on Intel and on AMD) may still round float32 differently."""
    import platform

    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def made_with_here() -> dict:
    """This process's torch build and CPU kernels, in MADE_WITH's terms, and the CPU's model."""
    import torch

    return {"torch": torch.__version__, "cpu_capability": torch.backends.cpu.get_cpu_capability(), "cpu": cpu_model()}


def same_kernels(made_with: dict) -> bool:
    """Whether this machine computes as the one that recorded `made_with` did, bit for bit: the same
    torch build and vector capability, and the same CPU model where the record names one (records
    made before the model was recorded, like MADE_WITH, name none: a CPU with a record of its own,
    e.g. ShippedTunnel.first_steps_on, is checked against that instead)."""
    here = made_with_here()
    return all(made_with.get(key) == here[key] for key in ("torch", "cpu_capability")) and \
        made_with.get("cpu", here["cpu"]) == here["cpu"]


def weights_sha256(state_dict) -> str:
    """SHA-256 of a state dict's names, dtypes, shapes and raw bytes, in name order: equal exactly
    when every tensor is equal bit for bit (independent of the file format that stores them)."""
    import torch

    digest = hashlib.sha256()
    for name in sorted(state_dict):
        tensor = state_dict[name].detach().cpu().contiguous()
        digest.update(f"{name}|{tensor.dtype}|{tuple(tensor.shape)}|".encode())
        digest.update(tensor.reshape(-1).view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def shipped(task: str, recipe_key: str) -> ShippedTunnel | None:
    """The shipped tunnel of `task` if the package ships one trained by the recipe `recipe_key`."""
    entry = SHIPPED.get(task)
    return entry if entry is not None and entry.recipe == recipe_key else None


def shipped_dir(task: str) -> Path:
    return SHIPPED_ROOT / task


def verify(entry: ShippedTunnel) -> Path:
    """The shipped directory of `entry`, after checking every file against its SHA-256; a missing
    or changed file raises ModelNotFoundError (one line)."""
    directory = shipped_dir(entry.task)
    for name, expected in entry.files.items():
        path = directory / name
        if not path.is_file():
            raise ModelNotFoundError(
                f"windtunnel-{entry.task}: the shipped file {path} is missing (an incomplete installation): reinstall "
                f"geomprobe, or train the recipe yourself with `geomprobe windtunnel train --task {entry.task} --out "
                f"DIR` and pass --model DIR")
        if file_sha256(path) != expected:
            raise ModelNotFoundError(
                f"windtunnel-{entry.task}: {path} does not match its SHA-256 in geomprobe.windtunnel.reference "
                f"(changed after installation): reinstall geomprobe, or train the recipe yourself with "
                f"`geomprobe windtunnel train --task {entry.task} --out DIR` and pass --model DIR")
    return directory


# BEGIN SHIPPED (written by scripts/reference_windtunnels.py; do not edit by hand)
SHIPPED: dict[str, ShippedTunnel] = {
    'bijection': ShippedTunnel(
        task='bijection', recipe='bijection-53e106668f',
        files={
            'config.json': '0fe03a3b7686d5b89ed185d57a6ce2991899864728f0ce0f1a745ebb5e2e4d34',
            'generation_config.json': '12a1d9050ada34fcc0d63739c37137e5f391e96f9af63df27250eecd7f24c585',
            'model.safetensors': '50aca35eeabf41ee496f2d0e357e36c7f41fc9e82e006482e60dba75e806b1bb',
            'tokenizer.json': 'aec40902d29ba591164ba1d0f1385356563031f148bc05c93056078db86666ad',
            'tokenizer_config.json': 'fcc83137b44657979d278c176b0fc598681b5f5d2b9b9b3522e9ba30199a837f',
            'windtunnel.json': '71ddd11d2ad82bb598d0836c107cdec332cfd90fbf244805ba26523085f1fe25',
            'metrics.json': 'cd8ce641ad6f5c464dba9d7564180640e06c723c23b76f7f08fe51eb9700d96d',
        },
        first_steps=(16, '94783b9895b65ddcb4a736b74cd9a87be84aa20ec35e11f0361af07c691f2992'),
        first_steps_on={'AMD EPYC': '3b42383560b4708ed98d8a53e39d0d5afe06a9266b8d1138c708e35a6944c7a5'},
        scores={"train_length": {"entropy_mae_bits": 0.002551252577775416, "kl_bits": 0.00031030420798668215, "mass_on_feasible": 0.9998069958710403}},
    ),
    'hmm': ShippedTunnel(
        task='hmm', recipe='hmm-7ff4fc6b7f',
        files={
            'config.json': '8470f6591c3514519da95a692dbfb640d664972b7bc65088da0da3d9220aab6a',
            'generation_config.json': '12a1d9050ada34fcc0d63739c37137e5f391e96f9af63df27250eecd7f24c585',
            'model.safetensors': '94c1890cc505363649d1447e597368643c5dacfd22d0108ba492b36f41fe3a28',
            'tokenizer.json': 'f8b2da43bbb94502fdb525819fcb30cd9b17f8bfe387e7ea3a06111be7fb667a',
            'tokenizer_config.json': 'fcc83137b44657979d278c176b0fc598681b5f5d2b9b9b3522e9ba30199a837f',
            'windtunnel.json': 'd23cdf2e04a1c94d6606a8f9763c0c435f9e378e577bfdf696186244766a4d0a',
            'metrics.json': '467f5e6511e66bd4c7f8273dedc2b1cb3d7d4ae66026020852a2eb8dd985151d',
        },
        first_steps=(16, '66e435629e57beb8f02d0107109eb49cc77234221393c34081db22994bcf3860'),
        first_steps_on={'AMD EPYC': '9570a9287913a405117e0033c032872b33ff55f28a87b059913f44ee803107cf'},
        scores={"length_23": {"entropy_mae_bits": 0.052282125152625064, "kl_bits": 0.021117609013354365, "mass_on_feasible": 0.9999999919171229}, "length_38": {"entropy_mae_bits": 0.08854395973393767, "kl_bits": 0.07806493277354776, "mass_on_feasible": 0.9999999864526457}, "train_length": {"entropy_mae_bits": 0.04728438419568645, "kl_bits": 0.015358292769013881, "mass_on_feasible": 0.9999999951896219}},
    ),
    'recall': ShippedTunnel(
        task='recall', recipe='recall-a72aa6a5ac',
        files={
            'config.json': '052a26da02dd101c79891369bb8d0b331c85d2767797b1f2a7da64779ffaec9d',
            'generation_config.json': '12a1d9050ada34fcc0d63739c37137e5f391e96f9af63df27250eecd7f24c585',
            'model.safetensors': '818e4397bcd28dfb4949f42de04af2c9e5fcb3d2e6ddb0d48c0c94199ea138e0',
            'tokenizer.json': '16ef83403396187f6ce3ec4d0b5004c08330ae7f6734512ff2e6ce9b2b412b70',
            'tokenizer_config.json': 'fcc83137b44657979d278c176b0fc598681b5f5d2b9b9b3522e9ba30199a837f',
            'windtunnel.json': 'b15ea8f6ebb45c0f43b2e3e8b9ceab62d8648099d61f6ffa4fcf77bef8bf2e87',
            'metrics.json': '1d27e0e05f563af9a69f7c8606929682907447127d5a70d13eee0b5bf322430e',
            'checkpoints/step-0000151.pt': 'd80a2a90d432e1850b8db2ef31681fe4a2bf71a7a3fa72802afafb11ef911f21',
            'checkpoints/step-0000239.pt': 'd4fbced2c6765e6319b83dd108ee3049db5dc5137760ce5d42ff1c9c6c01c432',
            'checkpoints/step-0000378.pt': 'bbb7ad9f5d0d37bfaea73266b49ab3e51f2caa2ce4da3449a2bc16643f8b06b1',
            'checkpoints/step-0000599.pt': '136c09321b62aea991abaa00d11d53c6efc570c503b9385cd4d3029f77d08c3c',
            'checkpoints/step-0000948.pt': '75ad1623e4378f734ec928724ed17c69a04de012a45ceaca816101cf8cdcdc08',
            'checkpoints/step-0001501.pt': 'f6ce34ab1dcccd4b61770f1131b6fa79c5e7367f349a88bc10e2d6f7fc8e73d1',
            'checkpoints/step-0002379.pt': 'dfa3126557ce60649447873cbc46b4f5d747df05ab8695e0c21c305e647202f4',
            'checkpoints/step-0003769.pt': 'b370e8869082bfa654b220e3c44ed932ff3cdf627eacf628f813c55182f394e2',
            'checkpoints/step-0005973.pt': 'dd3db469189028c12d19d9545df1eafc137a9d6657773ad824373b0a3c198f4b',
            'checkpoints/step-0009466.pt': 'c8bbd52d25eb7ac6c8490e23c2b5934f274ce65e010ce896688d5287df9a51cb',
            'checkpoints/step-0015000.pt': '6f07135a605d8eac91d35331dd4f2d4617f016b5ff6e131c9b9da32532216180',
        },
        first_steps=(16, '3e663149ae53047b7acc1ad377723bd8e1835c607921ceae20640ae7dabe1228'),
        first_steps_on={'AMD EPYC': '271fedbb5b06f153007d8c88f991f9437017b557db226c198793c99876445f38'},
        scores={"length_19": {"entropy_mae_bits": 2.5651450993030705e-06, "kl_bits": 1.2662434877084832e-07, "mass_on_feasible": 0.9999999491265044}, "train_length": {"entropy_mae_bits": 2.5203208316166486e-06, "kl_bits": 1.2422618889625224e-07, "mass_on_feasible": 0.9999999614665285}},
    ),
    'sula': ShippedTunnel(
        task='sula', recipe='sula-4b0a3f14a8',
        files={
            'config.json': 'c905061a4698c45a58e254206552ae2e26126f8a58b5711c3536127c7b5d9379',
            'generation_config.json': '12a1d9050ada34fcc0d63739c37137e5f391e96f9af63df27250eecd7f24c585',
            'model.safetensors': '338d015ee7009053dc215625318bdabd4b01ff731cacfeb8f1bf4617dc08f775',
            'tokenizer.json': '020ce40fa982a72b6ad6e89debb4f7e90392ee55e88f86298c2bff3bad1517f2',
            'tokenizer_config.json': 'fcc83137b44657979d278c176b0fc598681b5f5d2b9b9b3522e9ba30199a837f',
            'windtunnel.json': '9f975217310376a7613bf88053624b9297024d764a4703e0ba32480ecd94bc71',
            'metrics.json': '48b7e47fdbca901f37fdaeb584250a530d24a74c1eaf796ecaa8d68563afec22',
            'checkpoints/step-0000016.pt': '98d22ebd3c3c1a21b00d208996c2b44cdca367d0c35dd4621f89942a750e715a',
            'checkpoints/step-0000025.pt': '739b12f043129b08550a1bfe7a2e0ba8dee267b947a9e2a138094c87721d4971',
            'checkpoints/step-0000039.pt': '42024e9741841f4380bcfa4e298fcbe7e57799b993b7e07745c02505c3e29129',
            'checkpoints/step-0000061.pt': '80114e1d2861d422d1988c5c17fdf782b34454b9be4043dd78e38bb65e7920c3',
            'checkpoints/step-0000096.pt': '47ed436a34f4d2dde947dee7b31b53e7ca5b169188b9734c2b26afb79bd37aa8',
            'checkpoints/step-0000151.pt': 'ddb35bf6a9ad13893674f52926ecbd4a9a1c40f355fae2552a8aae900d00d733',
            'checkpoints/step-0000239.pt': '2802193f2ef0b85b8af90a2a6bb3f0a122e630d5a68f0eab461a761cd1acea5c',
            'checkpoints/step-0000378.pt': '16fc3c09d4954959fb9e9f3b55656ab9664cbc7f703cc21bb51e264e6dcebc85',
            'checkpoints/step-0000599.pt': 'c7c6194e91f76958906b392656d63f0007d0115b39c90600b6e78d97b71e2cf5',
            'checkpoints/step-0000948.pt': '4d449c9a386474a69ef0d6e1e65696051ad0c2b14e11f21025f71beafd3f0d3a',
            'checkpoints/step-0001500.pt': 'fc676a058535eb336cecb234d726ba3987db914da5da819f37a64e460c70620f',
        },
        first_steps=(16, '7e89e43ab5602fcfa10586c2bc5d4f65a37b73fbc85e0914b1a2d46454a69d0c'),
        first_steps_on={'AMD EPYC': 'c53dc64e0ca7b60e62b7396f42e68c7e92e6cc97fc048a53113a6bf7d57fd7cd'},
        scores={"train_length": {"entropy_mae_bits": 0.003437162465358629, "kl_bits": 8.029245706054325e-05, "mass_on_feasible": 0.999972679875267}},
    ),
}
# END SHIPPED

