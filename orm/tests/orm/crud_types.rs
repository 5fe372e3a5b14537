//! CRUD on every supported field type, on a memory database and on each file mode.

use crate::common::{self, Engine, Every, Person, TempDir};
use moria_orm::{Conn, CreateTime, Error, ModTime, Mode, Op, OptionalExt, Order, Query};

fn sample(n: i64) -> Every {
    Every {
        i: n * 1_000_000_007,
        small: -(n as i32),
        f: n as f64 * 0.25,
        b: n % 2 == 0,
        s: format!("Namé {n} \"quoted\" 'single'"),
        bytes: vec![0, 255, n as u8],
        maybe_i: (n % 3 == 0).then_some(n),
        maybe_s: (n % 3 == 1).then(|| format!("opt{n}")),
        ..Default::default()
    }
}

fn crud_every_type(c: &Conn) {
    c.ensure_schema::<Every>().unwrap();
    let mut rows: Vec<Every> = (1..=6).map(sample).collect();
    for r in &mut rows {
        let id = c.add(r).unwrap();
        assert_eq!(id, r.id);
        assert!(
            r.created.0 > 0 && r.changed.0 > 0,
            "timestamps filled on add"
        );
    }
    for r in &rows {
        assert_eq!(
            &c.get::<Every>(r.id).unwrap(),
            r,
            "round trip of row {}",
            r.id
        );
    }

    let mut r = rows[2].clone();
    r.s = "changed".into();
    r.maybe_i = None;
    r.maybe_s = Some(String::new());
    r.bytes.clear();
    r.changed = ModTime(0);
    c.update(&mut r).unwrap();
    assert!(r.changed.0 > 0, "ModTime refreshed on update");
    assert_eq!(c.get::<Every>(r.id).unwrap(), r);

    let mut partial = c.get::<Every>(rows[0].id).unwrap();
    partial.i = 42;
    partial.s = "not written".into();
    partial.created = CreateTime(1);
    c.update_fields(&mut partial, &["i"]).unwrap();
    let back = c.get::<Every>(rows[0].id).unwrap();
    assert_eq!(back.i, 42);
    assert_eq!(back.s, rows[0].s, "fields not named are left alone");
    assert_eq!(back.created, rows[0].created, "create time kept");
    assert!(matches!(
        c.update_fields(&mut partial, &["nope"]),
        Err(Error::UnknownField { .. })
    ));

    assert!(c.exists::<Every>(rows[1].id).unwrap());
    c.delete::<Every>(rows[1].id).unwrap();
    assert!(!c.exists::<Every>(rows[1].id).unwrap());
    assert!(matches!(
        c.delete::<Every>(rows[1].id),
        Err(Error::NotFound { id, .. }) if id == rows[1].id
    ));
    assert!(c.get::<Every>(rows[1].id).optional().unwrap().is_none());
    let mut ghost = rows[1].clone();
    assert!(matches!(c.update(&mut ghost), Err(Error::NotFound { .. })));
    assert_eq!(c.count::<Every>(&Query::new()).unwrap(), 5);
}

fn every_type_round_trips_in_memory(kind: Engine) {
    crud_every_type(&common::conn(kind));
}

#[test]
fn every_type_round_trips_in_each_file_mode() {
    let dir = TempDir::new("crud");
    for (i, mode) in [Mode::Full, Mode::Off, Mode::OffExclusive]
        .into_iter()
        .enumerate()
    {
        crud_every_type(&Conn::open(dir.file(&format!("m{i}.db")), mode).unwrap());
    }
}

fn forced_id_and_duplicate_id(kind: Engine) {
    let c = common::conn(kind);
    c.ensure_schema::<Person>().unwrap();
    let mut p = Person::new("a", "x", 1);
    p.id = 77;
    assert_eq!(c.add(&mut p).unwrap(), 77);
    let mut q = Person::new("b", "x", 1);
    q.id = 77;
    assert!(matches!(c.add(&mut q), Err(Error::Conflict { .. })));
    let mut dup = Person::new("a", "y", 2);
    let err = c.add(&mut dup).unwrap_err();
    assert!(
        matches!(&err, Error::Conflict { table: "Person", message } if message.contains("name")),
        "{err}"
    );
}

fn list_find_count_with_order_limit_offset(kind: Engine) {
    let c = common::conn(kind);
    c.ensure_schema::<Person>().unwrap();
    for i in 0..20 {
        let city = if i % 2 == 0 { "Paris" } else { "Lyon" };
        c.add(&mut Person::new(&format!("p{i:02}"), city, i))
            .unwrap();
    }
    let q = Query::new()
        .eq("city", "Paris")
        .order_by("age", Order::Desc)
        .limit(3)
        .offset(1);
    let ages: Vec<i64> = c
        .list::<Person>(&q)
        .unwrap()
        .iter()
        .map(|p| p.age)
        .collect();
    assert_eq!(ages, [16, 14, 12]);
    let offset_only = Query::new().order_by("age", Order::Asc).offset(18);
    assert_eq!(c.list::<Person>(&offset_only).unwrap().len(), 2);
    assert_eq!(
        c.count::<Person>(&Query::new().eq("city", "Lyon")).unwrap(),
        10
    );
    assert_eq!(
        c.count::<Person>(&Query::new().sql("age >= ? AND age < ?", &[&5, &8]))
            .unwrap(),
        3
    );
    let found = c
        .find::<Person>(
            &Query::new()
                .filter("name", Op::Like, "p1%")
                .order_by("name", Order::Desc),
        )
        .unwrap()
        .unwrap();
    assert_eq!(found.name, "p19");
    assert!(c
        .find::<Person>(&Query::new().eq("name", "nobody"))
        .unwrap()
        .is_none());
    assert_eq!(
        c.delete_where::<Person>(&Query::new().filter("age", Op::Lt, 5))
            .unwrap(),
        5
    );
    assert_eq!(c.count::<Person>(&Query::new()).unwrap(), 15);
}

fn cursor_streams_and_fills(kind: Engine) {
    let c = common::conn(kind);
    c.ensure_schema::<Person>().unwrap();
    for i in 0..100 {
        c.add(&mut Person::new(&format!("n{i}"), "c", i)).unwrap();
    }
    let mut sel = c
        .select::<Person>(&Query::new().order_by("id", Order::Asc))
        .unwrap();
    let mut cur = sel.rows();
    let mut p = Person::default();
    let mut n = 0;
    while cur.fill(&mut p).unwrap() {
        assert_eq!(p.age, n);
        assert_eq!(p.name, format!("n{n}"));
        n += 1;
    }
    assert_eq!(n, 100);
    drop(cur);
    let total: i64 = sel.rows().map(|r| r.unwrap().age).sum();
    assert_eq!(total, (0..100).sum::<i64>(), "a select can be walked again");
}

both!(
    every_type_round_trips_in_memory,
    forced_id_and_duplicate_id,
    list_find_count_with_order_limit_offset,
    cursor_streams_and_fills,
);
