"""``set_layers_permissions``: grant or revoke one permission level to users and groups on the
datasets chosen, through the same writes as ``PUT /api/v2/resources/{pk}/permissions``
(store.permissions.apply, merging), one transaction per dataset.

Levels are cumulative (view < download < edit < manage). Granting a level raises whoever holds
less to it and leaves whoever holds as much or more as they are; revoking it (``--delete``)
brings whoever holds it or more down to the level below (revoking view removes every
permission). The owner and superusers hold everything without rows: they are left as they are.
The anonymous and registered-members groups may hold view or download at most.

GeoNode's command, given no resources, changes every layer; this one asks for ``--resources`` or
``--filter`` so that a forgotten option cannot re-permission the whole catalogue.
"""

from __future__ import annotations

from catalogue_app.management import common
from catalogue_app.management.base import Command, CommandContext, CommandError
from catalogue_app.store import maintenance, permissions
from catalogue_app.store.users import ANONYMOUS_GROUP_ID


class SetLayersPermissions(Command):
    name = "set_layers_permissions"
    app_name = "geonode"
    help = ("Grant (or with --delete revoke) a permission level to users and groups on datasets, as the "
            "permissions API does; one transaction per dataset, a line each. Granting raises whoever holds less "
            "to the level; revoking brings whoever holds it or more to the level below.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("-r", "--resources", nargs="+", metavar="ID_OR_TITLE",
                            help="datasets by id, title or layer name (several, or separated by commas)")
        parser.add_argument("-f", "--filter", metavar="TEXT",
                            help="the datasets whose title contains this text (case aside)")
        parser.add_argument("-p", "--permission", required=True, metavar="LEVEL",
                            help="view, download, edit or manage (GeoNode's r, d, w, o also work)")
        parser.add_argument("-u", "--users", nargs="+", default=[], metavar="USERNAME",
                            help="user names (several, or separated by commas); AnonymousUser is anybody")
        parser.add_argument("-g", "--groups", nargs="+", default=[], metavar="GROUP",
                            help="group names (several, or separated by commas)")
        parser.add_argument("-d", "--delete", action="store_true", help="revoke the level instead of granting it")

    def run(self, ctx: CommandContext, options) -> None:
        level = common.level(options.permission)
        user_names = [n for text in options.users for n in common.comma_list(text)]
        group_names = [n for text in options.groups for n in common.comma_list(text)]
        if not user_names and not group_names:
            raise CommandError("name the users (-u) or groups (-g) to grant the level to or revoke it from.")
        users = common.principal_ids(ctx, user_names, "users")
        groups = common.principal_ids(ctx, group_names, "groups")
        group_ids = {name: gid for name, gid in groups.items()}
        if common.ANONYMOUS_USER in user_names:
            group_ids[common.ANONYMOUS_USER] = ANONYMOUS_GROUP_ID
        if not options.delete:
            for name, gid in group_ids.items():
                refusal = permissions.special_group_refusal(gid, level)
                if refusal:
                    raise CommandError(f"{name}: {refusal}")
        rows = self._datasets(ctx, options)
        db = common.db(ctx)
        verb = "revoke" if options.delete else "grant"
        ctx.say(f"{verb} {level} on {len(rows)} dataset{'s' if len(rows) != 1 else ''}")
        user_map = {uid: n for n, uid in users.items()}
        group_map = {gid: n for n, gid in group_ids.items()}
        common.run_each(ctx, rows, "dataset",
                        lambda row: db.write_sync(_change, row["id"], user_map, group_map, level, options.delete),
                        done="changed")

    def _datasets(self, ctx: CommandContext, options):
        db = common.db(ctx)
        wanted = [n for text in options.resources or [] for n in common.comma_list(text)]
        if not wanted and not options.filter:
            raise CommandError("name the datasets: --resources (ids, titles or layer names) or --filter TEXT.")
        found: dict[int, object] = {}
        for name in wanted:
            if name.isdecimal():
                rows = db.read_sync(lambda conn, n=int(name): maintenance.chosen(conn, "dataset", ids=[n]))
            else:
                rows = db.read_sync(maintenance.titled, "dataset", name)
            if not rows:
                raise CommandError(f"--resources: there is no dataset with id, title or name {name!r}.")
            found.update((r["id"], r) for r in rows)
        if options.filter:
            rows = db.read_sync(lambda conn: maintenance.chosen(conn, "dataset", title_contains=options.filter))
            if not rows:
                raise CommandError(f"--filter: no dataset's title contains {options.filter!r}.")
            if wanted:  # both: the datasets named that also match the filter
                keep = {r["id"] for r in rows}
                found = {k: v for k, v in found.items() if k in keep}
            else:
                found = {r["id"]: r for r in rows}
        return [found[k] for k in sorted(found)]


def _change(conn, rid: int, users: dict[int, str], groups: dict[int, str], level: str, revoke: bool) -> str:
    """Inside one write: the new level of each user and group on one dataset, applied as the
    permissions API applies a merge; says who changed."""
    owner, _kind, held_users, held_groups = maintenance.held_levels(conn, rid)
    fixed = maintenance.superuser_ids(conn) | {owner}
    rank = common.ORDER.index(level)
    new_users: dict[int, str] = {}
    new_groups: dict[int, str] = {}
    said = []
    for table, wanted, held, out in (("user", users, held_users, new_users), ("group", groups, held_groups, new_groups)):
        for ident, name in wanted.items():
            if table == "user" and ident in fixed:
                said.append(f"{name} unchanged (owner or superuser)")
                continue
            now = held.get(ident, "none")
            now_rank = common.ORDER.index(now) if now in common.ORDER else len(common.ORDER)
            if revoke:
                target = common.ORDER[rank - 1] if now_rank >= rank else now
            else:
                target = level if now_rank < rank else now
            if target == now:
                said.append(f"{name} {now} (unchanged)")
                continue
            out[ident] = target
            said.append(f"{name} {now} -> {target}")
    if new_users or new_groups:
        permissions.apply(conn, rid, new_users, new_groups, replace=False)
    return ", ".join(said)
