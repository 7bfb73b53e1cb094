import sys,collections,math,glob
def load(f):
    d={}
    for line in open(f):
        c=[x.strip() for x in line.split('|')]
        if len(c)<12 or not c[3].endswith('%'): continue
        d[(c[1],c[2],c[3])]=(float(c[4]),float(c[8]))
    return d
B=[load(f) for f in glob.glob('before-*.md')]
A=[load(f) for f in glob.glob('after-*.md')]
g=lambda l: math.exp(sum(map(math.log,l))/len(l))
rb=[];ra=[];below_b=[];below_a=[]
for k in B[0]:
    b=min(x[k][0] for x in B); a=min(x[k][0] for x in A)
    db=min(x[k][1] for x in B); da=min(x[k][1] for x in A)
    rb.append(b); ra.append(a)
    if db/b<1: below_b.append(k)
    if da/a<1: below_a.append((k, round(da/a,2)))
    if a/b>1.15 or a/b<0.85: print(k, round(b,3), round(a,3), round(a/b,2))
print("ours time after/before geomean", round(g([a/b for a,b in zip(ra,rb)]),3), "n", len(rb))
print("below1 before", len(below_b), "after", len(below_a)); print(below_a)
