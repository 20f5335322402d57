"""``irc view OUT | FILE.ir | model.onnx``: look at a compile's report or draw one file."""
from __future__ import annotations

import functools
import sys
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from .. import __version__
from ..diagnostics import UserError, bounded, display_path
from ..output import check_output_file, check_output_folder

if TYPE_CHECKING:
    import http.server


def add_parser(sub):
    p = sub.add_parser("view", help="open a compile's report, or draw an .ir or .onnx file",
                       description="OUT (a folder irc compile wrote): open its index.html.  "
                                   "FILE.ir or MODEL.onnx: draw it into an SVG and an HTML page "
                                   "(in a temporary folder, or at -o) and open the page.")
    p.add_argument("target", help="a compile output folder, an .ir file or an .onnx model")
    p.add_argument("-o", "--output", metavar="PATH",
                   help="where to write a single file's picture (a folder, or NAME.svg / NAME.html), "
                        "or the report of a compile folder that has no index.html (a folder)")
    p.add_argument("--force", action="store_true",
                   help="replace files at -o that irc did not write (refused otherwise)")
    p.add_argument("--serve", action="store_true",
                   help="serve the folder on 127.0.0.1 (a free port) instead of opening the file")
    p.add_argument("--port", type=int, default=0, help="port for --serve (default: any free one)")
    p.add_argument("--no-open", action="store_true", help="do not start a web browser")
    p.add_argument("--threshold", type=int, metavar="N",
                   help="single files: collapse pictures above N nodes by Cell scope (default: "
                        "viewer.dot.THRESHOLD, set by measurement so each picture lays out in "
                        "about a second)")
    p.add_argument("--timeout", type=float, metavar="S",
                   help="single files: give up a picture's layout after S seconds (then draw it "
                        "collapsed)")
    return p


def main(args) -> int:
    target = Path(args.target)
    if target.is_dir():
        page = target / "index.html"
        if not page.is_file():
            page = _report_elsewhere(target, args.output, force=args.force)
        folder = page.parent
    elif target.suffix in (".ir", ".onnx"):
        page = draw_file(target, args.output, threshold=args.threshold, timeout=args.timeout,
                         force=args.force)
        folder = page.parent
    elif not target.exists():
        raise UserError(f"no such file or folder: {args.target}")
    else:
        raise UserError(f"cannot view {args.target}",
                        hint="give a folder irc compile wrote, an .ir file or an .onnx model")
    if args.serve:
        server = serve(folder, port=args.port)
        url = f"http://127.0.0.1:{server.server_address[1]}/{page.name}"
        print(f"irc: serving {display_path(str(folder))} at {url}  (Ctrl-C to stop)", flush=True)
        if not args.no_open:
            import webbrowser
            webbrowser.open(url)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()
        return 0
    import webbrowser
    opened = False if args.no_open else webbrowser.open(page.resolve().as_uri())
    how = ("opened in the browser" if opened else
           "open it in a browser, or use --serve" if not args.no_open else "not opened: --no-open")
    print(f"irc: report {display_path(str(page))} ({how})", file=sys.stderr)
    return 0


def _report_elsewhere(folder: Path, output, *, force: bool = False) -> Path:
    """Draw the report of a compile folder that has none, without writing into it."""
    from irc.viewer.report import report_from_folder
    if output:
        dest = Path(output)
        check_output_folder(dest)
        check_output_file(dest / "index.html", force=force, ours=drawn_by_irc, suffix=".html")
    else:
        dest = Path(tempfile.mkdtemp(prefix="irc-view-"))
    try:
        report_from_folder(folder, dest)
    except FileNotFoundError:
        raise UserError(f"{display_path(str(folder))} has no index.html and no NN_<pass>.ir stages",
                        hint=f"run irc compile SCRIPT.py -o {display_path(str(folder))} first, "
                             f"or name an .ir or .onnx file") from None
    print(f"irc: {display_path(str(folder))} has no index.html; drew its stages into "
          f"{display_path(str(dest))}/", file=sys.stderr)
    return dest / "index.html"


def draw_file(path: Path, output, *, threshold=None, timeout=None, force=False) -> Path:
    """Draw one .ir or .onnx file; returns the HTML page written."""
    from irc.viewer.report import Stage, write_report
    from ..ir.text import print_module
    html_path, svg_name = _outputs(path, output)
    if output is not None:   # checked before any work; a temporary folder needs no check
        written = [html_path, html_path.parent / svg_name]
        if path.suffix == ".onnx":
            written.append(html_path.parent / (svg_name[:-len(".svg")] + ".ir"))
        for file in written:
            check_output_file(file, force=force, ours=drawn_by_irc, suffix=file.suffix)
    module = load_module(path)
    if path.suffix == ".onnx":
        # irc's header first, as irc compile writes it: the .ir written beside
        # the picture is then known as irc's, and replaced by the next view.
        module.meta = {"irc": __version__, **module.meta}
    kwargs = {}
    if threshold is not None:
        kwargs["threshold"] = threshold
    if timeout is not None:
        kwargs["timeout"] = timeout
    folder = html_path.parent
    folder.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".onnx":
        # The imported module's text, so that it can be read (and fed to irc opt).
        ir_name = svg_name[:-len(".svg")] + ".ir"
        (folder / ir_name).write_text(print_module(module))
    else:
        ir_name = display_path(str(path))
    stage = Stage(0, path.stem, module, ir_file=ir_name, picture=svg_name)
    result = write_report(folder, [stage], title=f"irc view: {path.name}",
                          index_name=html_path.name, **kwargs)
    picture = folder / result.files[0]
    print(f"irc: drew {display_path(str(path))} -> {display_path(str(picture))}, "
          f"{display_path(str(html_path))}", file=sys.stderr)
    return html_path


def drawn_by_irc(path: Path) -> bool:
    """A page, picture or IR text irc wrote: the page carries irc's generator
    tag, the IR irc's header; a picture is irc's when its page is."""
    from ..ir.text import is_printed_by_irc
    if path.suffix == ".svg":
        return drawn_by_irc(path.with_suffix(".html"))
    if path.suffix == ".ir":
        return is_printed_by_irc(path)
    try:
        with open(path, "rb") as f:
            return b'<meta name="generator" content="irc">' in f.read(4096)
    except OSError:
        return False


def load_module(path: Path):
    if not path.is_file():
        raise UserError(f"no such file: {path}")
    if path.suffix == ".onnx":
        from irc.viewer.onnx_import import load_onnx
        return load_onnx(path)
    from ..ir.text import parse_file
    from ..ir.verifier import VerifyError, verify
    module = parse_file(path)  # a ParseError carries FILE:LINE:COL
    try:
        verify(module)
    except VerifyError as e:
        # Still draw it: a broken module is exactly what one wants to look at.
        print(bounded(f"{e.where or display_path(str(path))}: warning: {e.message}"),
              file=sys.stderr)
    return module


def _outputs(path: Path, output) -> tuple[Path, str]:
    """(the HTML page, the picture's file name) for drawing ``path``."""
    if output is None:
        folder = Path(tempfile.mkdtemp(prefix="irc-view-"))
        return folder / f"{path.stem}.html", f"{path.stem}.svg"
    out = Path(output)
    if out.suffix == ".html":
        return out, f"{out.stem}.svg"
    if out.suffix == ".svg":
        return out.with_suffix(".html"), out.name
    if out.suffix:
        raise UserError(f"-o {output}: expected a folder, NAME.svg or NAME.html")
    return out / f"{path.stem}.html", f"{path.stem}.svg"


def serve(folder: Path, port: int = 0) -> http.server.ThreadingHTTPServer:
    """An HTTP server for ``folder`` bound to 127.0.0.1 (not yet serving)."""
    import http.server   # here: every irc command parses its arguments through this module

    class QuietHandler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format, *args):  # noqa: A002 - the base class's name
            pass

    handler = functools.partial(QuietHandler, directory=str(folder))
    try:
        return http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    except OSError as e:
        raise UserError(f"cannot serve on 127.0.0.1:{port}: {e.strerror}",
                        hint="leave --port out to take any free port") from None


def serve_in_background(folder: Path, port: int = 0) -> http.server.ThreadingHTTPServer:
    """Serve ``folder`` from a daemon thread (for tests and embedding); call shutdown() to stop."""
    server = serve(folder, port)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server
